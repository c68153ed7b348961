"""Arrays and complex types end to end: a third test service (tests/services/orders: a Product
result, an array of Product, an Order parameter with nested OrderLine items and an enum, a
string[] result, an int[] parameter) imported from its WSDL into the contract, served by the
reference from that contract, certified, diffed against the real ASMX runtime; hostile WSDLs
(a type containing itself, types nested without end) stay one-line errors or bounded values."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from asmx_runtime import real_runtime
from lxml import etree
from traffic import offered_calls, record_calls

from harness.contract import model, structure
from harness.contract.bindings import Binding, build_request, build_response, classify
from harness.contract.model import Contract, reference_result
from harness.contract.wsdl_import import (
    SOAP_ENCODING_NS,
    SOAP_ENCODING_STUB,
    WsdlError,
    describe,
)
from harness.contract.xmlsafe import local_name, parse_xml
from harness.errors import ClassificationError
from harness.judge import rules
from harness.judge.findings import Verdict
from harness.reference.app import answer, create_app
from harness.reference.server import running
from harness.traffic.exchange import Exchange, HttpRequest, HttpResponse
from harness.traffic.wsdls import import_wsdls
from tests.test_wsdl_conformance import harness

ORDERS = Path(__file__).parent / "services" / "orders"
SAVED = ORDERS / "contract.json"


@pytest.fixture(scope="module")
def orders() -> Contract:
    return model.load(SAVED)


@pytest.fixture(scope="module")
def real_orders(asmx_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The orders service on the real ASMX runtime (one instance for the module)."""
    with real_runtime(asmx_home, ORDERS, tmp_path_factory.mktemp("orders") / "work") as url:
        yield url


# ------------------------------------------------------------------ the contract as data


def test_saved_contract_holds_the_structure(orders: Contract) -> None:
    order = orders.schema["Order"]
    assert [(f.name, f.type, f.min_occurs, f.max_occurs) for f in order.fields] == [
        ("Customer", "string", 0, 1), ("Number", "int", 1, 1), ("Total", "decimal", 1, 1),
        ("Placed", "dateTime", 1, 1), ("Lines", "ArrayOfOrderLine", 0, 1),
        ("Status", "OrderStatus", 1, 1)]
    lines = orders.schema["ArrayOfOrderLine"].item
    assert (lines.name, lines.type, lines.max_occurs, lines.nillable) == (
        "OrderLine", "OrderLine", None, True)
    assert orders.schema["OrderStatus"].values == ("Draft", "Placed", "Shipped")
    assert orders.operation("ListProducts").result == "ArrayOfProduct"
    # ASMX leaves an operation with a complex parameter out of HttpGet/HttpPost, not one with
    # an array of a simple type (repeated fields) nor one with a complex result
    assert orders.bindings_of(orders.operation("SaveOrder")) == ("soap11", "soap12")
    assert orders.bindings_of(orders.operation("Sum")) == model.ALL_BINDINGS
    assert orders.bindings_of(orders.operation("GetProduct")) == model.ALL_BINDINGS
    assert model.from_dict(json.loads(model.dumps(orders))) == orders
    assert model.dumps(orders) == SAVED.read_text()


def test_contract_file_with_a_broken_type_is_a_one_line_error(tmp_path: Path) -> None:
    data = json.loads(SAVED.read_text())
    data["types"][0]["fields"][0]["type"] = "Nowhere"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    done = harness("serve", "--contract", str(broken), "--port", "0")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "unknown type Nowhere" in done.stderr


# ------------------------------------------------------------------ hostile WSDLs

_WSDL = """<?xml version="1.0" encoding="utf-8"?>
<wsdl:definitions xmlns:s="http://www.w3.org/2001/XMLSchema"
  xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/" xmlns:tns="urn:t"
  xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" targetNamespace="urn:t">
 <wsdl:types><s:schema elementFormDefault="qualified" targetNamespace="urn:t">
  <s:element name="Walk"><s:complexType><s:sequence>
   <s:element minOccurs="0" maxOccurs="1" name="node" type="tns:T0"/>
  </s:sequence></s:complexType></s:element>
  <s:element name="WalkResponse"><s:complexType/></s:element>
  {types}
 </s:schema></wsdl:types>
 <wsdl:message name="WalkSoapIn"><wsdl:part name="parameters" element="tns:Walk"/></wsdl:message>
 <wsdl:message name="WalkSoapOut"><wsdl:part name="parameters" element="tns:WalkResponse"/>
 </wsdl:message>
 <wsdl:portType name="TSoap"><wsdl:operation name="Walk"><wsdl:input message="tns:WalkSoapIn"/>
  <wsdl:output message="tns:WalkSoapOut"/></wsdl:operation></wsdl:portType>
 <wsdl:binding name="TSoap" type="tns:TSoap">
  <soap:binding transport="http://schemas.xmlsoap.org/soap/http"/>
  <wsdl:operation name="Walk"><soap:operation soapAction="urn:t/Walk" style="document"/>
   <wsdl:input><soap:body use="literal"/></wsdl:input>
   <wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation></wsdl:binding>
 <wsdl:service name="T"><wsdl:port name="TSoap" binding="tns:TSoap">
  <soap:address location="http://h/T.asmx"/></wsdl:port></wsdl:service>
</wsdl:definitions>"""


def _type(name: str, *fields: tuple[str, str, int]) -> str:
    elements = "".join(f'<s:element minOccurs="{m}" maxOccurs="1" name="{n}" type="{t}"/>'
                       for n, t, m in fields)
    return f'<s:complexType name="{name}"><s:sequence>{elements}</s:sequence></s:complexType>'


def test_a_type_containing_itself_is_a_bounded_structure() -> None:
    wsdl = _WSDL.format(types=_type("T0", ("Value", "s:int", 1), ("Next", "tns:T0", 0),
                                    ("Children", "tns:ArrayOfT0", 0))
                        + '<s:complexType name="ArrayOfT0"><s:sequence><s:element minOccurs="0"'
                          ' maxOccurs="unbounded" name="T0" nillable="true" type="tns:T0"/>'
                          '</s:sequence></s:complexType>')
    d = describe("http://h/T.asmx?WSDL", wsdl.encode())
    contract = Contract(d.operations, d.namespace, "T", "", ("soap11",), d.types)
    node = contract.schema["T0"]
    assert [(f.name, f.type) for f in node.fields] == [
        ("Value", "int"), ("Next", "T0"), ("Children", "ArrayOfT0")]
    value = model.sample_arguments(contract.operation("Walk"))["node"]
    depth = 0
    while isinstance(value, dict) and "Next" in value:
        value, depth = value["Next"], depth + 1
    assert 0 < depth < structure.MAX_FILL_DEPTH
    assert len(json.dumps(model.sample_arguments(contract.operation("Walk")))) < 100_000


@pytest.mark.parametrize("types, words", [
    (_type("T0", ("Value", "s:int", 1), ("Next", "tns:T0", 1)), "contains itself"),
    ("".join(_type(f"T{i}", ("Next", f"tns:T{i + 1}", 0)) for i in range(400))
     + _type("T400", ("Value", "s:int", 1)), "nest deeper than"),
    ("".join(_type(f"T{i}", ("Next", f"tns:T{i + 1}", 0)) for i in range(40))
     + _type("T40", ("Value", "s:int", 1)), "nests deeper than 32"),
    ("".join(_type(f"T{i}", *((f"F{j}", f"tns:T{i + 1}", 1) for j in range(8)))
             for i in range(12)) + _type("T12", ("Value", "s:int", 1)), "more than"),
])
def test_hostile_types_are_a_one_line_error(types: str, words: str) -> None:
    with pytest.raises(WsdlError) as caught:
        describe("http://h/T.asmx?WSDL", _WSDL.format(types=types).encode())
    assert words in str(caught.value) and "\n" not in str(caught.value)


# ------------------------------------------------------------------ the real runtime


@pytest.mark.interop
def test_real_runtime_wsdl_imports_to_the_saved_contract(real_orders: str, orders: Contract,
                                                        tmp_path: Path) -> None:
    derived = tmp_path / "derived.json"
    done = harness("contract", "--wsdl", f"{real_orders}/Orders.asmx", "--name", "Orders",
                   "-o", str(derived))
    assert done.returncode == 0, done.stderr
    assert derived.read_text() == SAVED.read_text()
    assert import_wsdls([f"{real_orders}/Orders.asmx"], "Orders") == orders


# ------------------------------------------------------------------ serve and certify


def _certify(tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "certify.json"
    done = harness("certify", "--no-html", "--json", str(out), "--report-dir",
                   str(tmp_path / "reports"), "--contract", str(SAVED), *args, cwd=tmp_path)
    data = json.loads(out.read_text()) if out.exists() else {}
    return done.returncode, data, done.stdout + done.stderr


def _structures(data: dict) -> int:
    """Results judged by their structure and found right."""
    return data["rules"]["OP-RESULT-STRUCTURE"]["passed"]


def test_reference_serves_the_contract_and_certify_passes(orders: Contract,
                                                          tmp_path: Path) -> None:
    code, data, out = _certify(tmp_path)
    assert code == 0, out
    assert data["counts"]["failed"] == 0
    # every complex result (3 operations) judged by its structure on each of the 4 bindings
    assert _structures(data) == 12
    features = tmp_path / "reports" / "features"
    assert "| SaveOrder " in (features / "soap12.feature").read_text()
    get = (features / "http_get.feature").read_text()
    assert "| Sum " in get and "SaveOrder" not in get  # not offered over HTTP


@pytest.mark.interop
def test_certify_passes_against_the_real_runtime(real_orders: str, tmp_path: Path) -> None:
    code, data, out = _certify(tmp_path, "--target", real_orders)
    assert code == 0, out
    assert _structures(data) == 12


def test_reference_reads_and_writes_as_xmlserializer(orders: Contract) -> None:
    """GET/POST: the ArrayOfX root, items named after the item type, arrays of a simple type as
    repeated fields; SOAP: the structure inside <Operation>Result; complex parameters refused
    over HTTP as ASMX refuses them; a leaf that does not convert is a fault."""
    with running(orders) as url:
        listed = httpx.get(f"{url}/Orders.asmx/ListProducts?category=x")
        summed = httpx.post(f"{url}/Orders.asmx/Sum", data={"values": ["1", "2"]})
        refused = httpx.get(f"{url}/Orders.asmx/SaveOrder?order=1")
        op = orders.operation("SaveOrder")
        args = model.sample_arguments(op)
        args["order"]["Lines"][0]["Quantity"] = "many"
        bad = httpx.post(f"{url}/Orders.asmx", content=build_request(
            orders, op, args, Binding.SOAP11, url).body, headers={
                "Content-Type": "text/xml; charset=utf-8", "SOAPAction": orders.soap_action(op)})
    root = parse_xml(listed.content)
    assert listed.headers["content-type"] == "text/xml; charset=utf-8"
    assert root.tag == "{http://example.org/orders/}ArrayOfProduct"
    assert [local_name(c) for c in root] == ["Product", "Product"]
    assert [local_name(c) for c in root[0]] == ["Id", "Name", "Price", "Tags"]
    assert [local_name(c) for c in root[0][3]] == ["string", "string"]
    assert summed.status_code == 200 and parse_xml(summed.content).text == reference_result(
        orders.operation("Sum"), {"values": ["1", "2"]})
    assert refused.status_code == 500
    assert bad.status_code == 500 and b"Client" in bad.content


def test_a_zeep_client_calls_complex_operations(orders: Contract) -> None:
    from zeep import Client
    from zeep.transports import Transport

    class Offline(Transport):  # the SOAP encoding schema ASMX's WSDL imports, not fetched
        def load(self, url: str) -> bytes:
            return SOAP_ENCODING_STUB if url == SOAP_ENCODING_NS else super().load(url)

    with running(orders) as url:
        client = Client(f"{url}/Orders.asmx?WSDL", transport=Offline())
        product = client.service.GetProduct(id=7)
        listed = client.service.ListProducts(category="toys")
        order_type = client.get_type("{http://example.org/orders/}Order")
        line_type = client.get_type("{http://example.org/orders/}OrderLine")
        lines = client.get_type("{http://example.org/orders/}ArrayOfOrderLine")(
            OrderLine=[line_type(Sku="A-1", Quantity=2)])
        order = order_type(Customer="Ana", Number=5, Total="12.50", Placed="2024-01-31T12:00:00",
                           Lines=lines, Status="Placed")
        saved = client.service.SaveOrder(order=order)
        tags = client.service.Tags()
    want = reference_result(orders.operation("GetProduct"), {"id": "7"})
    # zeep hands an ArrayOfX result back as a list, a nested one as its item field
    assert (str(product.Id), product.Name, str(product.Price), product.Tags.string) == (
        want["Id"], want["Name"], want["Price"], want["Tags"])
    assert [p.Name for p in listed] == [
        p["Name"] for p in reference_result(orders.operation("ListProducts"),
                                            {"category": "toys"})]
    assert isinstance(saved, int)
    assert tags == reference_result(orders.operation("Tags"), {})


def test_a_result_out_of_structure_fails_naming_the_path(orders: Contract) -> None:
    op = orders.operation("ListProducts")
    result = reference_result(op, {"category": "x"})
    result[0]["Price"] = "cheap"
    for binding in Binding:
        request = build_request(orders, op, {"category": "x"}, binding, "http://h")
        response = build_response(orders, op, binding, result)
        document = parse_xml(response.body)
        second = [e for e in document.iter() if local_name(e) == "Product"][1]
        second.append(second[0])  # Id after Tags: out of the sequence's order
        body = etree.tostring(document, xml_declaration=True, encoding="utf-8")
        exchange = Exchange(request, HttpResponse(200, response.headers, body))
        found = [f for f in rules.judge(exchange, orders, rules=["OP-RESULT-STRUCTURE"])
                 if f.verdict is Verdict.FAILED]
        assert found, binding
        said = found[0].actual + found[0].message
        assert "Product/Price: 'cheap' is not a decimal (R9-DECIMAL)" in said, said
        assert "Product/Id: out of order" in said, said


def test_a_huge_array_stays_under_the_size_cap(orders: Contract, tmp_path: Path) -> None:
    """A target answering an array of 200,000 items: certify reads no more than its cap and
    says so in one finding per call, no hang, no memory blow-up."""
    op = orders.operation("Tags")
    built: dict[Binding, HttpResponse] = {}  # one huge answer per binding, built once: CI is busy

    def huge(contract: Contract, request: HttpRequest) -> HttpResponse:
        response = answer(contract, request)
        if "Tags" not in request.url and b"Tags" not in request.body:
            return response
        try:
            binding = classify(contract, request).binding
        except ClassificationError:  # certify's odd requests (a PUT...): the reference's answer
            return response
        if binding not in built:
            built[binding] = build_response(contract, op, binding, ["x" * 20] * 200_000)
        return built[binding]

    with running(orders, app=create_app(orders, huge)) as url:
        code, data, out = _certify(tmp_path, "--target", url, "--operation", "Tags",
                                   "--max-response-mb", "1")
    assert code == 1, out
    capped = [f for f in data["findings"] if f["verdict"] == "failed"]
    assert capped and all(f["operation"] == "Tags" for f in capped), out
    assert "MB" in capped[0]["actual"] + capped[0]["message"], capped[0]


# ------------------------------------------------------------------ drift in a complex type


def _retyped(contract: Contract, type_name: str, change) -> Contract:
    types = tuple(replace(t, fields=change(t.fields)) if t.name == type_name else t
                  for t in contract.types)
    return replace(contract, types=types)


COMPLEX_DRIFTS = {
    "field renamed": (lambda c: _retyped(c, "Product", lambda fs: (
        replace(fs[0], name="ProductId"), *fs[1:])),
        "WSDL-RESULT", "Product: Product{Id:int"),
    "field retyped": (lambda c: _retyped(c, "OrderLine", lambda fs: (
        fs[0], replace(fs[1], type="long"), fs[2])),
        "WSDL-TYPES", "order.Lines.OrderLine.Quantity: int -> long"),
    "fields reordered": (lambda c: _retyped(c, "Order", lambda fs: (fs[1], fs[0], *fs[2:])),
                         "WSDL-TYPES", "order: Order{Customer:string? Number:int"),
    "array item retyped": (lambda c: _retyped(c, "ArrayOfInt", lambda fs: (
        replace(fs[0], name="long", type="long"),)),
        "WSDL-TYPES", "values: ArrayOfInt{int:int*} -> ArrayOfInt{long:long*}"),
}


@pytest.mark.parametrize("kind", COMPLEX_DRIFTS)
def test_drift_in_a_complex_type_fails_naming_it(orders: Contract, kind: str) -> None:
    drift, rule, words = COMPLEX_DRIFTS[kind]
    with running(drift(orders)) as url:
        done = harness("contract", "--check", str(SAVED), "--target", url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(line.startswith(f"[{rule}]") and words in line
               for line in done.stdout.splitlines()), done.stdout


# ------------------------------------------------------------------ structured --values


def test_structured_values_are_sent_over_the_generated_ones(orders: Contract,
                                                            tmp_path: Path) -> None:
    """--values FILE.json: an object for a complex parameter (fields not named keep their
    generated values), a list for an array one; TOML takes the same values."""
    seen: list[HttpRequest] = []

    def recording(contract: Contract, request: HttpRequest) -> HttpResponse:
        seen.append(request)
        return answer(contract, request)

    values = tmp_path / "values.json"
    values.write_text(json.dumps({
        "SaveOrder": {"order": {"Customer": "ACME", "Lines": [
            {"Sku": "A-1", "Quantity": 3}, {"Sku": "B-2", "Quantity": 1}]}},
        "Sum": {"values": [4, 5, 6]}}))
    toml = tmp_path / "values.toml"
    toml.write_text('[SaveOrder]\norder = \'{"Customer": "ACME", "Status": "Shipped"}\'\n'
                    "[Sum]\nvalues = [4, 5, 6]\n")
    with running(orders, app=create_app(orders, recording)) as url:
        code, _, out = _certify(tmp_path, "--target", url, "--values", str(values),
                                "--operation", "SaveOrder", "--operation", "Sum")
        code_toml, _, out_toml = _certify(tmp_path, "--target", url, "--values", str(toml),
                                          "--operation", "SaveOrder")
    assert code == 0, out
    assert code_toml == 0, out_toml
    saves = [parse_xml(r.body) for r in seen if b"<SaveOrder " in r.body]
    orders_sent = [structure.read(orders.schema, "Order", next(
        e for e in s.iter() if local_name(e) == "order")) for s in saves]
    assert orders_sent and all(o["Customer"] == "ACME" for o in orders_sent)
    given = [o for o in orders_sent if "Lines" in o and o["Lines"][0]["Sku"] == "A-1"]
    assert given and all([(line["Sku"], line["Quantity"]) for line in o["Lines"]]
                         == [("A-1", "3"), ("B-2", "1")] for o in given)
    assert all(o["Placed"] and o["Status"] for o in orders_sent)  # generated, kept
    assert any(o["Status"] == "Shipped" for o in orders_sent)  # from the TOML file
    gets = [r.url for r in seen if "/Sum?" in r.url]
    assert gets and all(u.endswith("?values=4&values=5&values=6") for u in gets)


@pytest.mark.parametrize("values, words", [
    ({"SaveOrder": {"order": {"Nope": 1}}}, "SaveOrder.order.Nope is not a field of Order"),
    ({"SaveOrder": {"order": {"Number": "x"}}}, "'x' is not a int (R9-INT)"),
    ({"SaveOrder": {"order": {"Lines": {"Sku": "A"}}}}, "ArrayOfOrderLine is an array"),
    ({"Sum": {"values": {"a": 1}}}, "ArrayOfInt is an array"),
])
def test_a_wrong_structured_value_is_a_one_line_error(tmp_path: Path, values: dict,
                                                      words: str) -> None:
    path = tmp_path / "values.json"
    path.write_text(json.dumps(values))
    code, _, out = _certify(tmp_path, "--values", str(path))
    assert code == 2, out
    assert words in out and out.strip().count("\n") == 0, out


# ------------------------------------------------------------------ diff

_VALUES_OF_RESULTS = ("--ignore-values", "*Result*", "--ignore-values", "/ArrayOf*",
                      "--ignore-values", "/Product/*", "--ignore-values", "/int")


def _diff(tmp_path: Path, primary: str, candidate: str, *args: str) -> tuple[int, dict, str]:
    out = tmp_path / "diff.json"
    done = harness("diff", "--primary", primary, "--candidate", candidate, "--contract",
                   str(SAVED), "--json", str(out), "--allure-dir", "", *args, cwd=tmp_path)
    data = json.loads(out.read_text()) if out.exists() else {}
    return done.returncode, data, done.stdout + done.stderr


def test_diff_compares_complex_operations_by_structure(orders: Contract,
                                                       tmp_path: Path) -> None:
    """Two references agree on every operation (5 x their bindings x 3 value sets, the same
    result over every binding); a candidate whose Product lost a field differs there, even
    when values are not compared."""
    drifted = COMPLEX_DRIFTS["field renamed"][0](orders)
    with running(orders) as primary, running(orders) as candidate, running(drifted) as other:
        code, data, out = _diff(tmp_path, primary, candidate)
        code_drift, drift, out_drift = _diff(tmp_path, primary, other, *_VALUES_OF_RESULTS)
    assert code == 0, out
    assert data["exchanges"] == 3 * sum(len(orders.bindings_of(op)) for op in orders.operations)
    # and each endpoint's ?WSDL, compared as a contract: a service description, not a call
    assert data["service_descriptions"] == {"WSDL": len(orders.endpoints)}
    assert data["rules"]["CROSS-BINDING"]["passed"] == 2 * len(orders.operations)
    assert code_drift == 1, out_drift
    failed = [f for f in drift["findings"] if f["verdict"] == "failed"]
    calls = [f for f in failed if f["binding"] != "WSDL"]
    assert {f["operation"] for f in calls} == {"GetProduct", "ListProducts"}
    # the ?WSDL compared as a contract: the drifted type named, not a traceback
    assert {f["cause"] for f in failed if f["binding"] == "WSDL"} >= {"result type differs"}
    assert any(f["path"].endswith("/Product/Id") or f["path"].endswith("Result/Id")
               for f in failed), failed[0]


@pytest.mark.interop
def test_diff_reference_against_the_real_runtime(real_orders: str, tmp_path: Path) -> None:
    """The reference answers as the real runtime on every operation, errors included: the same
    status, Content-Type and structure; only values (another service's data) and the prose of
    errors differ."""
    with running(model.load(SAVED)) as reference:
        code, data, out = _diff(tmp_path, real_orders, reference, "--errors",
                                *_VALUES_OF_RESULTS)
    assert code == 0, out
    assert data["counts"]["failed"] == 0
    judged = {f["operation"] for f in data["findings"]}
    assert {"GetProduct", "ListProducts", "SaveOrder", "Tags", "Sum"} <= judged
    assert data["rules"]["CROSS-BINDING"]["passed"] == 10


def test_probe_takes_a_contract_led_by_complex_operations(tmp_path: Path) -> None:
    """probe attacks an operation it can send over every binding, not the first one (here
    Tags, without parameters, then SaveOrder, SOAP only)."""
    data = json.loads(SAVED.read_text())
    first = {"Tags": 0, "SaveOrder": 1}
    data["operations"].sort(key=lambda o: first.get(o["name"], 2))
    contract = tmp_path / "led.json"
    contract.write_text(json.dumps(data))
    done = harness("probe", "--contract", str(contract), "--max-requests", "150",
                   "--allure-dir", "", "--failures", str(tmp_path / "f.jsonl"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert "probe: PASSED" in done.stdout


# ------------------------------------------------------------------ lint and replay


def test_lint_and_replay_judge_complex_calls_by_their_structure(orders: Contract,
                                                                tmp_path: Path) -> None:
    """A recording of every call (complex ones included) plus two a careless client made: an
    Order whose fields are out of order and whose line quantity is no int, and a Sum over GET
    with a non-integer item. lint fails exactly those by R9-COMPLEX, naming the path; replay
    against the reference finds every answer as recorded."""
    recording = tmp_path / "orders.jsonl"
    save, total = orders.operation("SaveOrder"), orders.operation("Sum")
    careless = model.sample_arguments(save)
    careless["order"]["Lines"][0]["Quantity"] = "three"

    def out_of_order(call, request: HttpRequest) -> HttpRequest:
        if call[2] is not careless:
            return request
        # Number before Customer: out of the sequence's order
        assert b"<Customer>A1</Customer><Number>42</Number>" in request.body
        return replace(request, body=request.body.replace(
            b"<Customer>A1</Customer><Number>42</Number>",
            b"<Number>42</Number><Customer>A1</Customer>"))

    calls = [*offered_calls(orders), (save, Binding.SOAP11, careless),
             (total, Binding.HTTP_GET, {"values": ["1", "two"]})]
    with running(orders) as url:
        record_calls(orders, url, recording, calls, edit=out_of_order)
        replayed = harness("replay", str(recording), "--target", url, "--contract", str(SAVED),
                           "--json", str(tmp_path / "replay.json"), "--quiet")
    linted = harness("lint", str(recording), "--contract", str(SAVED), "--json",
                     str(tmp_path / "lint.json"), "--quiet")
    assert linted.returncode == 1, linted.stdout + linted.stderr
    failed = [f for f in json.loads((tmp_path / "lint.json").read_text())["findings"]
              if f["verdict"] == "failed"]
    assert {(f["rule"], f["operation"], f["binding"]) for f in failed} == {
        ("R9-COMPLEX", "SaveOrder", "SOAP 1.1"), ("R9-COMPLEX", "Sum", "HTTP GET")}, failed
    said = " ".join(f["actual"] + " " + f.get("message", "") for f in failed)
    assert "order/Customer: out of order" in said, said
    assert "order/Lines/OrderLine/Quantity: 'three' is not a int (R9-INT)" in said, said
    assert "'two' is not a int" in said, said
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


#: Drifts of the C# source, all in one service (one runtime start) -> the line naming each.
SOURCE_DRIFTS = {
    "field renamed": ("public int Id;", "public int ProductId;",
                      "[WSDL-RESULT] /Orders.asmx?WSDL GetProduct: expected Product{Id:int"),
    "field retyped": ("public int Quantity;", "public long Quantity;",
                      "order.Lines.OrderLine.Quantity: int -> long"),
    "fields reordered": ("public string Customer;\n    public int Number;",
                         "public int Number;\n    public string Customer;",
                         "(order: Order{Customer:string? Number:int"),
    "array item retyped": ("public int Sum(int[] values)", "public int Sum(long[] values)",
                           "values: ArrayOfInt -> ArrayOfLong"),
}


@pytest.mark.interop
def test_real_runtime_complex_drift_fails_naming_it(asmx_home: Path, tmp_path: Path) -> None:
    service = tmp_path / "service"
    shutil.copytree(ORDERS, service)
    source = (service / "Orders.asmx").read_text()
    for old, new, _ in SOURCE_DRIFTS.values():
        assert old in source
        source = source.replace(old, new)
    source = source.replace("p.Id = id;", "p.ProductId = id;").replace(
        "foreach (int v in values)", "foreach (long v in values)").replace(
        "total += v;", "total += (int)v;")
    (service / "Orders.asmx").write_text(source)
    with real_runtime(asmx_home, service, tmp_path / "work") as url:
        done = harness("contract", "--check", str(SAVED), "--target", url)
    assert done.returncode == 1, done.stdout + done.stderr
    for kind, (_, _, words) in SOURCE_DRIFTS.items():
        assert words in done.stdout, (kind, done.stdout)
