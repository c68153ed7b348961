"""The contract table: what spec 4 says, as data every other module reads."""

from __future__ import annotations

import hashlib

import pytest

from harness.contract.model import (
    DEFAULT_NAMESPACE,
    Contract,
    ParamType,
    reference_result,
    sample_arguments,
    school_mobile,
)

# Spec 4.2-4.9 written out once, as test data, to check the table against the document.
SPEC_TABLE = {
    "AuthCode": ("/AuthCodeSending.asmx", ("code", "phone")),
    "LogoutFromSchool": ("/CenterlogOut.asmx", ("PhoneNumber", "UuId", "id_row_central")),
    "GetStudentsAudtiNote": ("/GetStudentsAudit.asmx", ("SubjectID", "Class_id")),
    "GetTeacherSubjectsByID": ("/GetTeacherSubjects.asmx", ("Tid", "TClassid")),
    "GetTeacherGrpupsByID": ("/GetTeacherGroups.asmx", ("Tid",)),
    "GetTokenDevice": ("/PushNotificationMobile.asmx", ("id",)),
    "SendNotificationType": ("/NotificationNotes.asmx", ("id", "baseUrlSchool", "TypeNotfication")),
    "SendMarkNotes": ("/NotificationNotes.asmx", ("id", "id_class", "baseUrlSchool")),
}
VARIANTS = (0, 1, 2)


def test_table_matches_the_spec(contract: Contract) -> None:
    table = {op.name: (op.endpoint, op.parameter_names) for op in contract.operations}
    assert table == SPEC_TABLE
    assert len(contract.endpoints) == 7
    assert [op.name for op in contract.endpoints["/NotificationNotes.asmx"]] == [
        "SendNotificationType", "SendMarkNotes"]


def test_only_id_row_central_is_an_int(contract: Contract) -> None:
    ints = {p.name for op in contract.operations for p in op.parameters
            if p.type is ParamType.INT}
    assert ints == {"id_row_central"}


def test_only_get_token_device_has_a_result(contract: Contract) -> None:
    with_result = {op.name: (op.result, op.result_element) for op in contract.operations
                   if op.result_element}
    assert with_result == {"GetTokenDevice": ("string", "GetTokenDeviceResult")}


@pytest.mark.parametrize("op", school_mobile().operations, ids=lambda op: op.name)
def test_operation_names_its_elements(op) -> None:
    assert op.response_element == f"{op.name}Response"
    assert all(op.parameter(name).name == name for name in op.parameter_names)
    assert op.parameter("no-such-parameter") is None
    assert op.clause.startswith("4.")


def test_lookup(contract: Contract) -> None:
    first = contract.operations[0]
    assert contract.operation(first.name) is first
    assert contract.find(first.name) is first
    assert contract.find(first.name.lower()) is None  # operation names are case-sensitive
    with pytest.raises(KeyError):
        contract.operation("NoSuchOperation")


def test_endpoint_matching_is_case_insensitive(contract: Contract) -> None:
    for path in contract.endpoints:
        assert contract.endpoint(path.lstrip("/").upper()) == path
        assert contract.endpoint(path) == path
    assert contract.endpoint("Nope.asmx") is None


@pytest.mark.parametrize(("namespace", "expected"), [
    (None, '"http://tempuri.org/{}"'),
    ("http://tempuri.org/", '"http://tempuri.org/{}"'),
    ("urn:school", '"urn:school/{}"'),
    ("http://example.org/svc", '"http://example.org/svc/{}"'),
    ("http://example.org/svc/", '"http://example.org/svc/{}"'),
])
def test_soap_action_joins_namespace_and_operation_with_one_slash(namespace, expected) -> None:
    contract = school_mobile(namespace)
    for op in contract.operations:
        assert contract.soap_action(op) == expected.format(op.name)


def test_namespace_setting(contract: Contract) -> None:
    assert contract.namespace == DEFAULT_NAMESPACE == "http://tempuri.org/"
    other = school_mobile("urn:example:school")
    assert other.namespace == "urn:example:school"
    assert other.operations == contract.operations
    assert school_mobile("") is school_mobile(None)  # empty means the default


def test_sensitive_names(contract: Contract) -> None:
    assert contract.sensitive_names() == {
        "code", "phone", "PhoneNumber", "UuId", "GetTokenDeviceResult"}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("op", school_mobile().operations, ids=lambda op: op.name)
def test_sample_arguments_fill_every_parameter_distinctly(op, variant: int) -> None:
    args = sample_arguments(op, variant)
    assert list(args) == list(op.parameter_names)
    assert len(set(args.values())) == len(args)  # a swapped order shows
    for p in op.parameters:
        if p.type is ParamType.INT:
            int(args[p.name])


def test_sample_arguments_cover_non_ascii_and_xml_special_text(contract: Contract) -> None:
    values = [v for op in contract.operations for variant in VARIANTS
              for v in sample_arguments(op, variant).values()]
    assert any(not v.isascii() for v in values)
    assert all(any(ch in v for v in values) for ch in "<>&\"'")


@pytest.mark.parametrize("op", school_mobile().operations, ids=lambda op: op.name)
def test_reference_result(op) -> None:
    args = sample_arguments(op, 1)
    result = reference_result(op, args)
    if op.result is None:
        assert result is None
    else:  # sha256 of the values in table order joined by U+001F: sha256(id) for GetTokenDevice
        joined = "\x1f".join(args[name] for name in op.parameter_names)
        assert result == hashlib.sha256(joined.encode("utf-8")).hexdigest()


def test_get_token_device_result_is_sha256_of_id(contract: Contract) -> None:
    op = contract.operation("GetTokenDevice")
    assert reference_result(op, {"id": "7"}) == hashlib.sha256(b"7").hexdigest()


@pytest.mark.parametrize(("text", "ok"), [("42", True), (" -7 ", True), ("+0", True),
                                          ("2147483647", True), ("2147483648", False),
                                          ("-2147483649", False), ("x", False), ("", False),
                                          ("1_000", False), ("٣", False), ("4.0", False)])
def test_int_parameters_accept_what_asmx_reads_as_int32(text, ok):
    from harness.contract.model import ParamType

    assert ParamType.INT.accepts(text) is ok
    assert ParamType.STRING.accepts(text)
