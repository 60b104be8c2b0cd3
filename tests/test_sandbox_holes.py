"""The sandbox's holes a hostile review found, each tried through the real bubblewrap:
keys and host paths in bubblewrap's own /proc entries, descriptors inherited from
the setup, nested user namespaces, host-run files planted through workspace writes,
RAM and disk without a total, a scratch folder too deep or too big to list."""

from __future__ import annotations

from skillchat.sandbox.command_tool import RunRequest, Verdict


def test_the_network_switch_says_it_includes_local_services() -> None:
    request = RunRequest("true", None, "/scratch", True, False, 60, Verdict("ask"))
    assert request.network_label() == "ON (includes this machine's local services)"
    assert (
        RunRequest("true", None, "/scratch", False, False, 60, Verdict("ask")).network_label()
        == "off"
    )
