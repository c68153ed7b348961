"""``harness call`` (docs/call.md): one operation over one binding (or each), sent once to a real
server on loopback, printed (XML indented, sensitive values as pseudonyms) and judged; nothing
else is sent. The interop tests call the real ASMX runtime: School Mobile over its four
bindings, and another ASMX service (tests/services/inventory) through its WSDLs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asmx_runtime import real_runtime
from auth_servers import PASSWORD, USER

from harness.cli import main
from harness.contract.model import load
from harness.reference.app import create_app
from harness.reference.server import running

INVENTORY = Path(__file__).resolve().parent / "services" / "inventory"


class Counting:
    """An ASGI layer that notes each request's method and path before the reference answers."""

    def __init__(self, app) -> None:
        self.app = app
        self.seen: list[str] = []

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            query = scope["query_string"].decode()
            self.seen.append(f"{scope['method']} {scope['path']}" + (f"?{query}" if query else ""))
        await self.app(scope, receive, send)


@pytest.fixture
def counted(contract):
    counting = Counting(create_app(contract))
    with running(contract, app=counting) as url:
        yield url, counting.seen


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_one_call_shown_redacted_and_judged_and_nothing_else_sent(counted, capsys) -> None:
    url, seen = counted
    code, out, err = run(capsys, "call", "GetTokenDevice", "id=7", "--binding", "soap12",
                         "--target", url)
    assert code == 0, out + err
    assert seen == ["POST /PushNotificationMobile.asmx"]  # no ?WSDL, no service check
    assert "--- request, SOAP 1.2 " in out and "\n      <id>7</id>\n" in out  # indented
    assert "Content-Type: application/soap+xml; charset=utf-8" in out
    assert "--- answer, SOAP 1.2: HTTP 200 in " in out
    # the token is a sensitive result: its pseudonym, as every report shows it
    assert "<GetTokenDeviceResult>redacted-" in out
    assert out.rstrip().splitlines()[-1].startswith("call: PASSED - ")


def test_all_bindings_one_call_each_side_by_side(counted, capsys) -> None:
    url, seen = counted
    code, out, _ = run(capsys, "call", "GetTokenDevice", "--all-bindings", "--target", url,
                       "id=7")  # NAME=VALUE after the options too
    assert code == 0, out
    assert seen == ["POST /PushNotificationMobile.asmx", "POST /PushNotificationMobile.asmx",
                    "GET /PushNotificationMobile.asmx/GetTokenDevice?id=7",
                    "POST /PushNotificationMobile.asmx/GetTokenDevice"]
    table = out[out.index("binding    status"):].splitlines()[1:5]
    assert [row.split()[:4] for row in table] == [
        ["SOAP", "1.1", "HTTP", "200"], ["SOAP", "1.2", "HTTP", "200"],
        ["HTTP", "GET", "HTTP", "200"], ["HTTP", "POST", "HTTP", "200"]]
    assert len({row.split()[4] for row in table}) == 1  # the same pseudonym: the same token
    assert all(row.endswith("passed") for row in table)


def test_a_failing_answer_exits_1_naming_the_rule(reference_url, capsys, tmp_path) -> None:
    """Another namespace than the deployment's: the fault answered fails R4-STATUS."""
    code, out, _ = run(capsys, "call", "LogoutFromSchool", "--target", reference_url,
                       "--namespace", "http://other.example/", "--json",
                       str(tmp_path / "call.json"))
    assert code == 1
    assert "[R4-STATUS]" in out and "call: FAILED - " in out
    assert json.loads((tmp_path / "call.json").read_text())["verdict"] == "failed"


@pytest.mark.parametrize(("argv", "said"), [
    (["GetTokenDevic"], "'GetTokenDevic' is not an operation of School Mobile (did you mean "
                        "GetTokenDevice?)"),
    (["GetTokenDevice", "idd=7"], "GetTokenDevice has no parameter 'idd' (did you mean id?) "
                                  "(parameters: id)"),
    (["GetTokenDevice", "7"], "'7' is not NAME=VALUE (e.g. id=7)"),
    (["GetTokenDevice", "--binding", "soap13"], "soap13"),
    (["GetTokenDevice", "--target", "http://127.0.0.1:9"],
     "GetTokenDevice over SOAP 1.1 got no answer: "),
])
def test_usage_errors_and_an_unreachable_target_are_one_line_exit_2(capsys, argv, said) -> None:
    code, _, err = run(capsys, "call", *argv)
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err


def test_authentication_and_environment_as_every_sending_command(
        basic_front, capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("QA_PASSWORD", PASSWORD)
    (tmp_path / "harness.toml").write_text(
        f'[env.staging]\ntarget = "{basic_front}"\nuser = "{USER}:${{QA_PASSWORD}}"\n')
    code, out, err = run(capsys, "call", "GetTokenDevice", "id=7", "--env", "staging")
    assert code == 0, out + err
    assert f"(environment staging: {basic_front})" in out.splitlines()[-1]
    assert PASSWORD not in out + err and "Authorization" not in out  # added on the wire only
    code, _, err = run(capsys, "call", "GetTokenDevice", "--target", basic_front)
    assert code == 2 and "asks for authentication: HTTP 401" in err


def test_another_asmx_service_through_its_wsdl(capsys) -> None:
    """The reference serving the inventory contract; the contract and the target both come
    from the WSDL URLs; every binding the operation is offered over."""
    with running(load(INVENTORY / "contract.json")) as url:
        code, out, _ = run(capsys, "call", "PriceOf", "sku=A-1", "quantity=3",
                           "--wsdl", f"{url}/Stock.asmx", "--all-bindings")
        assert code == 0, out
        assert f"call: PriceOf over SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST at {url}," in out
        code, _, err = run(capsys, "call", "Restock", "--wsdl", f"{url}/Stock.asmx",
                           "--binding", "get")
        assert code == 2 and "Restock is not offered over HTTP GET" in err


@pytest.mark.interop
def test_the_real_asmx_runtime_over_every_binding(asmx_url, capsys) -> None:
    code, out, _ = run(capsys, "call", "GetTokenDevice", "id=7", "--all-bindings",
                       "--target", asmx_url)
    assert code == 0, out
    assert out.count("passed") >= 4 and "call: PASSED" in out


@pytest.mark.interop
def test_another_asmx_service_on_the_real_runtime_through_its_wsdl(asmx_home, tmp_path,
                                                                     capsys) -> None:
    with real_runtime(asmx_home, INVENTORY, tmp_path / "runtime") as url:
        code, out, _ = run(capsys, "call", "CountItems", "sku=A-1", "includeReserved=true",
                           "--wsdl", f"{url}/Stock.asmx", "--all-bindings")
        assert code == 0, out
        table = out[out.index("binding    status"):].splitlines()[1:5]
        assert all(row.endswith("passed") for row in table), out
