"""A claim's enumeration against the passage's: an item the passage's own list leaves out.

A generator that restates a list ("valid values are query, header or cookie") swaps one item for
a neighbour ("query, header or body"), or adds one the passage names elsewhere in another role
("Side Bets include 21+3, Lucky Ladies and Three Card Poker" where Three Card Poker is a table
game). Every word of such a claim is in the chunk and its sentence is close to the passage's, so
neither the exact fields nor the support score see it; the list does. When the claim enumerates
three or more items and a list of the cited passage (three or more items, one sentence) shares at
least two of them, each of the claim's items must be among the items of the passage's lists that
share two: an item that is not is reported by name.

Lists are read by their commas (followed by a space: "15,000" is a number) and final "and"/"or",
items of up to MAX_ITEM_WORDS words, none of them "and" or "or". Where a list starts and ends
inside a sentence is not marked, so the first item is compared by its last words and the last
item by its first words ("Side Bets include 21+3" is the item "21+3"; "cookie parameters alike"
is "cookie"), the middle ones whole; a plural and an article do not count. Only a middle or last
item is reported: a claim's first "item" may be no item at all ("made up of four elements,
Functions, Categories and ..."). A claim whose list shares fewer than two items with every list
of the passage is left to the other checks: it may gather its items from several sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

MAX_ITEM_WORDS = 4
MIN_ITEMS = 3
MAX_ITEMS = 30  # bounds the regular expression's work at each position: linear in the text
MAX_LISTS = 100  # read per text (a claim has one or two, a chunk a few): bounds the matching on hostile text
_WORD = r"(?!(?:and|or|nor)\b)[^\W_][\w+#]*(?:[.'’&/-][\w+#]+)*\+*"
_ITEM = rf"{_WORD}(?:\s+{_WORD}){{0,{MAX_ITEM_WORDS - 1}}}"
_LIST = re.compile(rf"(?<![\w+#])({_ITEM})((?:\s*,\s+{_ITEM}){{1,{MAX_ITEMS - 2}}})\s*,?\s+(?:and|or|and/or|as well as)\s+({_ITEM})", re.IGNORECASE)
_QUOTES = re.compile(r"[\"“”‘’`«»®™©℠]|(?<!\w)'|'(?!\w)")  # and trade marks: "21+3®, Lucky Ladies®"
_LEADING = {"the", "a", "an", "its", "their", "his", "her", "our", "your", "also"}  # ("and", "or": no item word)
# an "item" opening with one of these is a clause ("..., so that the tools and methods ..."):
# what was read is not a list
_CLAUSE = {"so", "that", "which", "who", "whom", "whose", "when", "where", "while", "because", "if", "unless",
           "although", "though", "but", "then", "thus", "since", "as", "until", "after", "before", "it", "they",
           "we", "this", "these", "those", "there"}
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z\"“(])|\n+")


@dataclass(frozen=True)
class Foreign:
    item: str  # the claim's item, as written
    passage_list: str  # the passage's list that names the others

    def describe(self) -> str:
        return f"{self.item!r} is not among the items of the passage's list {self.passage_list!r}"


def foreign_items(claim: str, passage: str) -> list[Foreign]:
    """The items of the claim's enumerations that the passage's matching lists leave out (module
    docstring); empty when the claim enumerates nothing or no passage list matches. Linear in
    both texts: items are matched through an index of the passage's item readings."""
    claimed = _lists(claim)
    if not claimed:
        return []
    found, index = _passage_lists(passage)
    foreign: list[Foreign] = []
    for items in claimed:
        shared: dict[int, int] = {}
        for item in items:
            for j in {j for r in _readings(item) for j in index.get(r, ())}:
                shared[j] = shared.get(j, 0) + 1
        matching = sorted(j for j, count in shared.items() if count >= 2)
        if not matching:
            continue
        named = {r for j in matching for t in found[j][1] for r in _readings(t)}
        foreign += [Foreign(i.written, found[matching[0]][0]) for i in items
                    if i.position != "first" and not _readings(i) & named]
    return foreign


@lru_cache(maxsize=256)  # a chunk cited by many claims is read once
def _passage_lists(passage: str) -> tuple[list[tuple[str, list[_Item]]], dict[tuple[str, ...], set[int]]]:
    found = _all_lists(passage)
    index: dict[tuple[str, ...], set[int]] = {}
    for j, (_, items) in enumerate(found):
        for item in items:
            for reading in _readings(item):
                index.setdefault(reading, set()).add(j)
    return found, index


@dataclass(frozen=True)
class _Item:
    words: tuple[str, ...]  # as compared: case folded, singular, no leading article
    position: str  # "first" (compared by its last words), "middle" (whole), "last" (by its first words)
    written: str  # as the text has it


def _lists(text: str) -> list[list[_Item]]:
    return [items for _, items in _all_lists(text)]


def _all_lists(text: str) -> list[tuple[str, list[_Item]]]:
    found = (read for sentence in _SENTENCE.split(text) for read in _lists_with_text(sentence))
    return list(islice(found, MAX_LISTS))


def _lists_with_text(sentence: str) -> list[tuple[str, list[_Item]]]:
    plain = _QUOTES.sub("", sentence)
    found = []
    for match in _LIST.finditer(plain):
        middle = [m for m in re.split(r"\s*,\s+", match.group(2)) if m.strip()]
        items = ([_item(match.group(1), "first")] + [_item(m, "middle") for m in middle]
                 + [_item(match.group(3), "last")])
        items = [i for i in items if i.words]
        if len(items) >= MIN_ITEMS and not any(i.words[0] in _CLAUSE for i in items if i.position != "first"):
            found.append((" ".join(match.group(0).split()), items))
    return found


def _item(text: str, position: str) -> _Item:
    words = [_singular(w) for w in re.findall(_WORD, text.casefold())]
    while words and words[0] in _LEADING:
        words.pop(0)
    return _Item(tuple(words), position, " ".join(text.split()))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _readings(item: _Item) -> set[tuple[str, ...]]:
    """What an item may name: its words, where a first item may be cut at its start and a last
    item at its end (the list's edge is not marked: "such as 21+3" and "Side Bets include 21+3"
    both end in the item "21+3"). Two items name the same thing when they share a reading."""
    n = len(item.words)
    if item.position == "first":
        return {item.words[j:] for j in range(n)}
    if item.position == "last":
        return {item.words[:j] for j in range(1, n + 1)}
    return {item.words}
