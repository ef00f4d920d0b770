"""Real-language document texts shared by the tests of cross-lingual search and citations:
excerpts of Czech law 270/2025 Sb. and of the German Wikipedia (both in ../shared/corpus), and a
short English policy."""

CZECH_LAW = """# Zákon č. 270/2025 Sb., kterým se mění trestní zákoník

## § 67 Peněžitý trest

(1) Peněžitý trest může soud uložit pachateli za jakýkoli trestný čin; zejména zváží jeho uložení,
jestliže pachatel pro sebe nebo pro jiného úmyslným trestným činem získal nebo se snažil získat
majetkový prospěch. Peněžitý trest soud neuloží, je-li zřejmé, že by byl nedobytný.

(2) Peněžitý trest může být uložen jako trest samostatný, jestliže vzhledem k povaze a závažnosti
spáchaného trestného činu a osobě a poměrům pachatele uložení jiného trestu není třeba.

## § 74c Zákaz plnění veřejných zakázek nebo účasti ve veřejné soutěži

(1) Soud může uložit trest zákazu plnění veřejných zakázek nebo účasti ve veřejné soutěži na jeden
rok až deset let, dopustil-li se pachatel trestného činu v souvislosti s uzavíráním smlouvy na
plnění veřejné zakázky nebo s jejím plněním anebo s účastí v zadávacím řízení nebo ve veřejné soutěži.

## Účinnost

Tento zákon nabývá účinnosti dnem 1. ledna 2026, s výjimkou ustanovení čl. XI bodů 1, 3, 4, 10, 13
a 16, která nabývají účinnosti dnem 1. července 2026.
"""

GERMAN_GEOGRAPHY = """# Deutschland

## Inseln

Die größten deutschen Inseln in der Ostsee sind (von West nach Ost) Fehmarn, Poel, Hiddensee, Rügen
und Usedom. Rügen ist zugleich die größte deutsche Insel. Größte Halbinsel ist Fischland-Darß-Zingst.

## Relief

Die Zugspitze in Bayern ist mit 2962 Metern über Normalhöhennull die höchste Erhebung Deutschlands.
Das geologisch junge Faltengebirge der Alpen ist das einzige Hochgebirge, an dem Deutschland Anteil hat.
"""

ENGLISH_POLICY = """# Travel policy

## Hotels

Hotels in Berlin are paid up to EUR 140 a night. Hotels in Hamburg are paid up to EUR 135 a night.

## Approval

A business trip abroad must be approved in advance by the head of department.
"""
