"""Named environments (docs/staging.md): ``[env.NAME]`` tables of harness.toml chosen with
``--env NAME``, laid over the file's top level; every report names the environment; a diff
role named ``env:NAME`` is sent with that environment's own credentials."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from auth_servers import NTLM_USER, PASSWORD, USER

from harness import cli
from harness.errors import UsageError

CONFIG = """\
timeout = 20
operations = ["GetTokenDevice"]
headers = {X-Team = "qa"}

[certify]
maxfail = 5

[env.staging]
target = "https://staging.example/School"
timeout = 7
headers = {X-Gateway-Key = "${STAGING_KEY}"}

[env.staging.certify]
maxfail = 9

[env.preprod]
target = "https://preprod.example/School"
user = "qa:${PREPROD_PASSWORD}"
"""


def parsed(argv: list[str]):
    """``argv`` as the harness command reads it (config file and environment applied)."""
    parser = cli.build_parser()
    fill = cli._configured(parser, argv)
    args = parser.parse_args(argv)
    fill(args)
    return args


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "harness.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STAGING_KEY", "k-123")
    monkeypatch.delenv("PREPROD_PASSWORD", raising=False)  # another environment's secret
    return tmp_path


def test_env_lays_the_environment_over_the_top_level(folder: Path) -> None:
    """Top level, then its command table, then [env.NAME], then [env.NAME.certify], then the
    flags; a table the environment sets replaces the top level's whole; a variable only
    another environment uses need not be set."""
    args = parsed(["certify", "--env", "staging"])
    assert (args.target, args.timeout, args.maxfail) == ("https://staging.example/School", 7, 9)
    assert args.header == [("X-Gateway-Key", "k-123")] and args.operation == ["GetTokenDevice"]
    assert args.env == "staging"
    assert parsed(["certify", "--env", "staging", "--timeout", "3"]).timeout == 3
    plain = parsed(["certify"])
    assert (plain.target, plain.timeout, plain.maxfail, plain.env) == (None, 20, 5, None)
    assert parsed(["replay", "x.jsonl", "--env", "staging"]).target == \
        "https://staging.example/School"


@pytest.mark.parametrize(("argv", "said"), [
    (["certify", "--env", "stagin"],
     "harness certify: error: --env stagin: harness.toml has no [env.stagin] (did you mean "
     "staging?) (environments: staging, preprod)"),
    (["certify", "--env", "preprod"], "[env.preprod]: ${PREPROD_PASSWORD} is not set"),
    (["diff", "--env", "qa"], "(environments: staging, preprod)"),
])
def test_an_unknown_or_unusable_environment_is_one_line_and_exit_2(
        folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1, err


def test_env_without_a_config_file_or_with_a_mistyped_key_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="no config file defines environments"):
        parsed(["certify", "--env", "staging"])
    (tmp_path / "harness.toml").write_text('[env.staging]\ntagret = "https://x.example"\n')
    with pytest.raises(UsageError, match=r"harness.toml \[env.staging\]: unknown setting "
                                         r"'tagret' \(did you mean target\?\)"):
        parsed(["certify", "--env", "staging"])
    (tmp_path / "harness.toml").write_text('env = "staging"\n')
    with pytest.raises(UsageError, match=r"one table per environment"):
        parsed(["certify"])


def test_reports_name_the_environment(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Console verdict line, JSON, JUnit properties and Allure's environment.properties."""
    (folder / "harness.toml").write_text(
        '[env.local]\ntimeout = 10\noperations = ["GetTokenDevice"]\nbindings = ["soap12"]\n'
        '[env.local.certify]\njson = "out/c.json"\njunit = "out/c.xml"\nreport-dir = "out"\n'
        "no-html = true\nquiet = true\n", encoding="utf-8")
    assert cli.main(["certify", "--env", "local"]) == 0
    out = capsys.readouterr().out
    verdict = [line for line in out.splitlines()
               if line.startswith("certify: PASSED")]
    assert verdict and "(environment local: embedded reference at http://" in verdict[0], out
    assert json.loads((folder / "out/c.json").read_text())["environment"] == "local"
    assert '<property name="environment" value="local"/>' in (folder / "out/c.xml").read_text()
    properties = (folder / "out/allure-results/environment.properties").read_text()
    assert "environment = local\n" in properties


def test_diff_roles_each_with_their_environment_s_credentials(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ntlm_front: str, basic_front: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The legacy deployment behind NTLM, the new one behind Basic: one set of credentials
    for both cannot pass; ``--primary env:legacy --candidate env:new`` sends each its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QA_PASSWORD", PASSWORD)
    (tmp_path / "harness.toml").write_text(
        f'[env.legacy]\ntarget = "{ntlm_front}"\nuser = \'{NTLM_USER}:${{QA_PASSWORD}}\'\n'
        'ntlm = true\n'
        f'[env.new]\ntarget = "{basic_front}"\nuser = "{USER}:${{QA_PASSWORD}}"\n'
        '[env.migration.diff]\nprimary = "env:legacy"\ncandidate = "env:new"\n'
        'json = "diff.json"\nallure-dir = ""\n', encoding="utf-8")
    one = ["--operation", "GetTokenDevice", "--quiet"]
    assert cli.main(["diff", "--env", "migration", *one]) == 0, capsys.readouterr()
    report = json.loads((tmp_path / "diff.json").read_text())
    assert report["environment"] == "migration"
    assert report["environments"] == {"primary": "legacy", "candidate": "new"}
    assert report["primary"] == ntlm_front and report["candidate"] == basic_front
    capsys.readouterr()
    shared = ["--user", f"{NTLM_USER}:{PASSWORD}", "--ntlm"]
    assert cli.main(["diff", "--primary", ntlm_front, "--candidate", basic_front, *shared,
                     "--json", "", *one]) == 2
    assert "asks for Basic authentication, not NTLM" in capsys.readouterr().err


def test_shadow_mirrors_to_roles_named_by_environments(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auth_upstream: str, ntlm_front: str,
        basic_front: str) -> None:
    """``shadow --candidate env:new --secondary env:second``: the candidate behind NTLM and the
    secondary behind Basic, each mirrored call sent with its role's own credentials."""
    import httpx

    from harness.shadow.process import ShadowProcess

    monkeypatch.setenv("QA_PASSWORD", PASSWORD)
    config = tmp_path / "harness.toml"
    config.write_text(
        f'[env.new]\ntarget = "{ntlm_front}"\nuser = \'{NTLM_USER}:${{QA_PASSWORD}}\'\n'
        f'ntlm = true\n[env.second]\ntarget = "{basic_front}"\n'
        f'user = "{USER}:${{QA_PASSWORD}}"\n', encoding="utf-8")
    with ShadowProcess(auth_upstream, "env:new", tmp_path / "shadow.jsonl", "--config",
                       str(config), "--json", str(tmp_path / "shadow.json"),
                       secondary="env:second") as shadow:
        answers = [httpx.get(f"{shadow.url}/PushNotificationMobile.asmx/GetTokenDevice?id={i}",
                             timeout=60) for i in (1, 2)]
        code, stdout, stderr = shadow.stop()
    assert code == 0, stdout[-2000:] + stderr
    assert [a.status_code for a in answers] == [200, 200]
    report = json.loads((tmp_path / "shadow.json").read_text())
    assert (report["verdict"], report["candidate"], report["secondary"]) == (
        "passed", ntlm_front, basic_front)
    assert report["environments"] == {"primary": None, "candidate": "new", "secondary": "second"}


def test_load_names_the_environment_from_its_engine_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference_url: str) -> None:
    """load judges in a child process (and its workers): the environment travels with it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "harness.toml").write_text(f'[env.local]\ntarget = "{reference_url}"\n')
    sample = Path(__file__).resolve().parents[1] / "recordings" / "sample-all-bindings.jsonl"
    assert cli.main(["load", str(sample), "--env", "local", "--rate", "200", "--quiet",
                     "--json", "load.json"]) == 0
    assert json.loads((tmp_path / "load.json").read_text())["environment"] == "local"
