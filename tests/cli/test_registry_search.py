"""``codebot mcp search`` against the loopback registry (``tests/servers/registry_server.py``):
what it shows, how it asks the registry (its name search, the catalog with ``updated_since``,
cursor paging), offline answers from the cache, and the bounds a hostile registry meets.

Two tiers. The first test is the installed ``codebot`` as a real process (``registry_env.run``):
the main search, start to exit, as the console script runs it. The others run the CLI in the
test's own process (:class:`Cli`: ``cli.app.run`` with ``--cwd`` and the test's environment,
stdin from /dev/null, as ``run`` gives its child): the requests, the cache, the errors and exit
codes, trust and the bounds. Nothing in search reads stdin, handles a signal or outlives the
command, so they prove what the command does; what the console script adds around ``run`` is
proved in tests/e2e and tests/hostile.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.entry_point import project, user
from tests.cli.registry_env import Cli, cli, home, registry, run
from tests.helpers import write_settings
from tests.servers.registry_server import OFFICIAL, RegistryServer

__all__ = ["cli", "home", "project", "registry", "user"]  # fixtures


def test_search_shows_what_a_server_is_and_how_it_runs(
    registry: RegistryServer, home: Path, project: Path
) -> None:
    code, out, err = run("mcp", "search", "weather", cwd=project)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "io.example/weather  1.0.2  Weather"  # the name match ranks first
    assert lines[1] == "  Forecasts and current conditions for any city"
    assert lines[2] == (
        "  install: npm @example/weather-mcp · oci docker.io/example/weather-mcp:1.0.2 · "
        "remote sse · remote streamable-http"
    )
    assert lines[3] == "  secrets: WEATHER_API_KEY, X-API-Key"
    # a description match, after the name match; the older version 1.0.1 is not listed
    assert "io.github.joelverhagen/knapcode-samplemcpserver  0.5.0" in out
    assert "1.0.1" not in out
    # deprecated and deleted servers are not shown; the footer counts the deprecated one
    assert "old-weather" not in out and "gone-weather" not in out
    assert lines[-1] == "2 servers; 1 deprecated not shown (--all shows them)"
    assert "fetching the catalog" in err  # the first search says why it takes longer


def test_descriptions_are_searched_as_well_as_names(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    code, out, err = cli("mcp", "search", "NOTES", cwd=project)
    assert code == 0, err
    assert out.splitlines()[0] == "io.example/kv  0.3.0  Key-value store"
    # the registry's own name search found nothing; the catalog's description did
    searches = [q for p, q in registry.requests if q.get("search")]
    assert searches == [{"search": "NOTES", "version": "latest", "limit": "100"}]
    code, out, _ = cli("mcp", "search", "notes disk", cwd=project)  # every word must match
    assert "io.example/kv" in out
    code, out, _ = cli("mcp", "search", "notes paper", cwd=project)
    assert (code, out) == (0, "no servers match 'notes paper'\n")


def test_all_shows_deprecated_servers_with_their_message_never_deleted_ones(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    code, out, err = cli("mcp", "search", "weather", "--all", cwd=project)
    assert code == 0, err
    assert "io.example/old-weather  0.9.5  [deprecated: Use io.example/weather instead]" in out
    assert "gone-weather" not in out
    assert out.splitlines()[-1] == "3 servers"


def test_json_output(cli: Cli, registry: RegistryServer, home: Path, project: Path) -> None:
    code, out, err = cli("mcp", "search", "weather", "--json", "--all", cwd=project)
    assert code == 0, err
    data = json.loads(out)
    assert [s["name"] for s in data["servers"]] == [
        "io.example/weather",
        "io.example/old-weather",
        "io.github.joelverhagen/knapcode-samplemcpserver",
    ]
    weather = data["servers"][0]
    assert weather["title"] == "Weather" and weather["version"] == "1.0.2"
    assert weather["needs_secrets"] is True and weather["secrets"] == [
        "WEATHER_API_KEY",
        "X-API-Key",
    ]
    assert weather["repository"] == "https://github.com/example/weather-mcp"
    assert {
        "kind": "remote",
        "transport": "streamable-http",
        "url": "https://{region}.weather.example/mcp",
    } in weather["install"]
    assert weather["install"][0] == {
        "kind": "package",
        "registry_type": "npm",
        "identifier": "@example/weather-mcp",
        "version": "1.0.2",
        "runtime": "npx",
        "transport": "stdio",
    }
    old = data["servers"][1]
    assert old["status"] == "deprecated"
    assert old["status_message"] == "Use io.example/weather instead"
    assert data["registries"][0]["url"] == registry.url
    assert data["registries"][0]["from_cache"] is False and data["registries"][0]["complete"]


def test_the_catalog_is_paged_then_only_changes_are_fetched(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    assert cli("mcp", "search", "filler", cwd=project)[0] == 0
    listing = [q for p, q in registry.requests if p == "/v0.1/servers" and "search" not in q]
    # 9 fixture servers listed (not the deleted one, nor weather 1.0.1: not the latest) + 25
    # fillers, 10 a page: 4 pages, each from the cursor the last one ended on
    keys = sorted(
        f"{name}:{r['detail']['version']}"
        for name, records in registry.versions.items()
        for r in records
        if registry.response(r)["_meta"][OFFICIAL]["isLatest"]
    )
    assert len(keys) == 34 and len(listing) == 4
    assert "cursor" not in listing[0]
    assert [q.get("cursor") for q in listing[1:]] == [keys[9], keys[19], keys[29]]
    assert all(q["version"] == "latest" and "updated_since" not in q for q in listing)
    registry.backdate(hours=1)
    registry.requests.clear()
    code, out, err = cli("mcp", "search", "filler", cwd=project)
    assert code == 0, err
    assert out.splitlines()[-1] == "25 servers"  # from the catalog
    listing = [q for p, q in registry.requests if p == "/v0.1/servers" and "search" not in q]
    assert len(listing) == 1  # nothing changed: one empty page
    assert listing[0]["version"] == "latest" and listing[0]["updated_since"].endswith("Z")
    assert "fetching the catalog" not in err


def test_a_change_in_the_registry_reaches_the_next_search(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    assert "io.example/kv" in cli("mcp", "search", "notes", cwd=project)[1]
    registry.backdate(hours=1)
    registry.set_status("io.example/kv", "deleted", "gone")
    registry.publish(
        {
            "name": "io.example/journal",
            "description": "Writes notes to a journal",
            "version": "2.0.0",
            "remotes": [{"type": "streamable-http", "url": "https://journal.example/mcp"}],
        }
    )
    registry.requests.clear()
    code, out, err = cli("mcp", "search", "notes", cwd=project)
    assert code == 0, err
    assert "io.example/journal  2.0.0" in out and "io.example/kv" not in out
    listing = [q for p, q in registry.requests if p == "/v0.1/servers" and "search" not in q]
    assert len(listing) == 1 and "updated_since" in listing[0]  # the changes, one page


def test_a_second_search_works_offline_and_says_how_old_its_data_is(
    cli: Cli, home: Path, project: Path
) -> None:
    with RegistryServer() as registry:
        (home / "settings.json").write_text(json.dumps({"registry_url": registry.url}))
        assert cli("mcp", "search", "weather", cwd=project)[0] == 0
    # the registry is gone: its port refuses connections
    code, out, err = cli("mcp", "search", "notes", cwd=project)
    assert code == 0, err
    assert "io.example/kv  0.3.0  Key-value store" in out
    assert "cannot reach" in err and "results from its cached catalog" in err
    assert "(less than a minute old)" in err
    code, out, err = cli("mcp", "search", "weather", "--offline", "--json", cwd=project)
    assert code == 0, err
    data = json.loads(out)
    assert data["registries"][0]["from_cache"] is True and data["registries"][0]["error"] is None
    assert data["registries"][0]["age_seconds"] < 60
    assert "offline: results from the cached catalog" in err


def test_nothing_cached_and_no_registry_is_exit_1(cli: Cli, home: Path, project: Path) -> None:
    with RegistryServer() as registry:
        url = registry.url
    (home / "settings.json").write_text(json.dumps({"registry_url": url}))
    code, out, err = cli("mcp", "search", "weather", cwd=project)
    assert code == 1 and out == ""
    assert f"error: cannot reach {url}/v0.1/servers" in err
    assert "Nothing is cached yet to search offline." in err


def test_the_default_registry_is_the_official_one(cli: Cli, user: Path, project: Path) -> None:
    code, _, err = cli("mcp", "search", "weather", "--offline", cwd=project)
    assert code == 0
    assert (
        "nothing is cached for https://registry.modelcontextprotocol.io yet: search once "
        "without --offline"
    ) in err


def test_registries_are_searched_in_order(cli: Cli, home: Path, project: Path) -> None:
    with RegistryServer(fillers=0) as first, RegistryServer(fillers=0, fixtures=False) as second:
        second.publish(
            {"name": "io.example/weather", "description": "A private weather", "version": "9.0.0"}
        )
        settings = {"registry_url": [second.url, first.url]}
        (home / "settings.json").write_text(json.dumps(settings))
        code, out, err = cli("mcp", "search", "weather", cwd=project)
    assert code == 0, err
    names = [line for line in out.splitlines() if not line.startswith(" ")]
    assert names[:2] == ["io.example/weather  9.0.0", "io.example/weather  1.0.2  Weather"]
    assert f"  registry: {second.url}" in out and f"  registry: {first.url}" in out


def test_a_project_registry_url_needs_trust(
    cli: Cli,
    registry: RegistryServer,
    home: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CODEBOT_TRUST_PROJECT")  # for the in-process runs too
    with RegistryServer(fixtures=False, fillers=0) as evil:
        evil.publish({"name": "io.evil/weather", "description": "weather", "version": "1.0.0"})
        write_settings(project, {"registry_url": evil.url})
        code, out, err = cli("mcp", "search", "weather", cwd=project)
        assert code == 0, err
        assert "ignoring registry_url" in err and "not trusted" in err
        assert "io.evil/weather" not in out and "io.example/weather" in out
        assert evil.requests == []
        code, out, err = cli("--trust-project", "mcp", "search", "weather", cwd=project)
        assert code == 0, err
        assert "io.evil/weather" in out


def test_bad_registry_url_is_a_settings_error(cli: Cli, home: Path, project: Path) -> None:
    (home / "settings.json").write_text(json.dumps({"registry_url": "http://registry.example"}))
    code, _, err = cli("mcp", "search", "x", cwd=project)
    assert code == 3
    assert '"http://registry.example" uses plain http' in err and "settings.json" in err


def test_hostile_text_is_escaped(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    code, out, err = cli("mcp", "search", "hostile", cwd=project)
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "Totally \\x1b]0;pwned\\x07 safe" in out
    assert "Harmless \\x1b[2J\\x1b[31mtool\\x1b[0m \\u202etxt.exe" in out


def test_a_registry_that_never_stops_paging_is_cut_off(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    registry.endless = True
    code, out, err = cli("mcp", "search", "weather", cwd=project)
    assert code == 0, err
    listing = [q for p, q in registry.requests if p == "/v0.1/servers" and "search" not in q]
    searching = [q for p, q in registry.requests if "search" in q]
    assert len(listing) == 100 and len(searching) == 10  # MAX_PAGES, SEARCH_PAGES
    assert "io.example/weather" in out
    assert "still being fetched" in err  # the crawl resumes from its cursor next time


def test_an_oversized_answer_is_refused(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    registry.body = b'{"servers": [' + b" " * (9 << 20) + b"]}"
    code, _, err = cli("mcp", "search", "weather", cwd=project)
    assert code == 1
    assert "more than the 8 MiB codebot accepts" in err


def test_an_answer_that_is_not_a_registry_is_refused(
    cli: Cli, registry: RegistryServer, home: Path, project: Path
) -> None:
    registry.body = b"<html>not json</html>"
    code, _, err = cli("mcp", "search", "weather", cwd=project)
    assert code == 1 and "did not answer JSON" in err
    registry.body = None
    registry.answer_status = 503
    code, _, err = cli("mcp", "search", "weather", cwd=project)
    assert code == 1 and "answered HTTP 503: Service unavailable" in err
