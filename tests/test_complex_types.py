"""Arrays and complex types end to end: a third test service (tests/services/orders: a Product
result, an array of Product, an Order parameter with nested OrderLine items and an enum, a
string[] result, an int[] parameter) imported from its WSDL into the contract, served by the
reference from that contract, certified, diffed against the real ASMX runtime; hostile WSDLs
(a type containing itself, types nested without end) stay one-line errors or bounded values."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.contract import model, structure
from harness.contract.model import Contract
from harness.contract.wsdl_import import WsdlError, describe, import_wsdls
from tests.test_wsdl_conformance import harness, real_runtime

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
