"""Alerts reach people (issue 27, item 2): a webhook on loopback receives the JSON alert, a
loopback SMTP server the mail; a channel that fails is named and does not stop the others; the
freshness rule judges a scheduled source by its interval plus grace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from alert_receivers import smtp_receiver, webhook_receiver

from rag_pipeline.alerts.config import AlertsConfig
from rag_pipeline.alerts.deliver import Alert, AlertDeliveryError, send
from rag_pipeline.alerts.freshness import judge
from rag_pipeline.config import ConfigError, config_from_dict

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
DAY, HOUR = timedelta(days=1), timedelta(hours=1)


def _alert(**overrides: object) -> Alert:
    fields = {"kind": "gate_failed", "source": "handbook", "reason": "ndcg = 0.41 is under 0.5",
              "run_id": "r-1", "link": "http://127.0.0.1:3000/runs/r-1", **overrides}
    return Alert(**fields)  # type: ignore[arg-type]


def test_a_webhook_receives_the_alert_as_json() -> None:
    with webhook_receiver() as (url, received):
        assert send(_alert(), AlertsConfig(webhook=url)) == ["webhook"]
    [got] = received
    assert got["content_type"] == "application/json" and got["path"] == "/hooks/rag"
    body = got["body"]
    assert (body["kind"], body["source"], body["run_id"]) == ("gate_failed", "handbook", "r-1")
    assert body["reason"] == "ndcg = 0.41 is under 0.5" and body["link"].endswith("/runs/r-1")
    assert body["subject"] == "[rag-pipeline] handbook: evaluation gate failed"


def test_mail_goes_to_every_recipient_with_the_reason_and_link() -> None:
    with smtp_receiver() as (port, received):
        config = AlertsConfig(smtp={"host": "127.0.0.1", "port": port, "sender": "rag@example.com",
                                    "to": ["ops@example.com", "oncall@example.com"]})
        assert send(_alert(kind="crashed", reason="the plan failed: hr/_access.yaml"), config) == ["smtp"]
    [mail] = received
    assert mail["Subject"] == "[rag-pipeline] handbook: sync failed"
    assert mail["To"] == "ops@example.com, oncall@example.com"
    text = mail.get_payload()
    assert "hr/_access.yaml" in text and "/runs/r-1" in text


def test_a_failing_channel_is_named_and_the_others_still_get_the_alert() -> None:
    with webhook_receiver(status=500) as (url, _), smtp_receiver() as (port, mails):
        config = AlertsConfig(webhook=url, smtp={"host": "127.0.0.1", "port": port, "sender": "a@b.c", "to": ["d@e.f"]})
        with pytest.raises(AlertDeliveryError) as err:
            send(_alert(), config)
    assert "webhook 127.0.0.1" in str(err.value) and "500" in str(err.value) and "delivered: smtp" in str(err.value)
    assert len(mails) == 1


def test_an_unreachable_webhook_fails_within_the_timeout_naming_it() -> None:
    with webhook_receiver() as (url, _):
        pass  # closed: nothing listens on that port any more
    with pytest.raises(AlertDeliveryError, match="webhook 127.0.0.1"):
        send(_alert(), AlertsConfig(webhook=url, timeout_seconds=2))


def test_hostile_reasons_are_bounded_and_sent_as_data() -> None:
    reason = "\x1b[31m<script>alert(1)</script>\u202e" + "x" * 100_000
    with webhook_receiver() as (url, received):
        send(_alert(reason=reason), AlertsConfig(webhook=url))
    body = received[0]["body"]
    assert body["reason"].startswith("\x1b[31m<script>") and len(body["reason"]) == 2000


@pytest.mark.parametrize("alerts, words", [
    ({"webhook": "ftp://example.com/x"}, ["alerts.webhook", "http:// or https://"]),
    ({"webhook": "https://user:secret@example.com/x"}, ["alerts.webhook", "RAG_PIPELINE_ALERT_WEBHOOK"]),
    ({"smtp": {"host": "mail", "sender": "a@b", "to": []}}, ["alerts.smtp.to"]),
    ({"smtp": {"host": "mail", "sender": "a@b", "to": ["c@d"], "port": 70000}}, ["alerts.smtp.port"]),
    ({"freshness_grace_minutes": -5}, ["alerts.freshness_grace_minutes"]),
    ({"webhok": "https://example.com"}, ["webhok"]),
])
def test_a_broken_alerts_section_is_a_config_error_naming_the_key(alerts: dict, words: list[str]) -> None:
    with pytest.raises(ConfigError) as err:
        config_from_dict({"alerts": alerts}, None)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_the_environment_webhook_wins_over_the_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_PIPELINE_ALERT_WEBHOOK", "https://hooks.example.com/T000/secret")
    assert AlertsConfig(webhook="https://example.com/x").webhook_url() == "https://hooks.example.com/T000/secret"


def test_a_scheduled_source_is_fresh_within_its_interval_plus_grace_and_stale_after() -> None:
    assert judge(NOW - 20 * HOUR, DAY, HOUR, NOW).passed
    assert judge(NOW - 25 * HOUR + timedelta(minutes=1), DAY, HOUR, NOW).passed
    stale = judge(NOW - 26 * HOUR, DAY, HOUR, NOW)
    assert not stale.passed and "1 d 2 h ago" in stale.reason and "every 1 d + 1 h grace" in stale.reason


def test_a_source_never_synced_turns_stale_one_interval_after_it_was_first_seen() -> None:
    assert judge(None, HOUR, timedelta(0), NOW, first_seen=NOW - 30 * timedelta(minutes=1)).passed
    late = judge(None, HOUR, timedelta(0), NOW, first_seen=NOW - 2 * HOUR)
    assert not late.passed and "never synced" in late.reason


def test_a_source_without_a_schedule_is_reported_not_judged() -> None:
    verdict = judge(NOW - 400 * DAY, None, HOUR, NOW)
    assert verdict.passed and "no schedule" in verdict.reason and verdict.deadline is None
