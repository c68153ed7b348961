"""Redaction keeps its regression power (issue 30 item 5): a value a recording holds as a
pseudonym is compared by the live value's pseudonym under the recording's key, whatever form
carries it (SOAP, an XML ``string`` document, text/plain, JSON, any charset), recorded and
live in the same form or not. The recorded side is what capture's own Redactor makes of an
answer; the comparison is replay's (``compare_responses``)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_redaction_property import CONTRACT, KEY, TOKEN_OP, _token_answer

from harness.contract.bindings import Binding
from harness.judge.compare import compare_responses
from harness.judge.compare.pseudonyms import Pseudonyms
from harness.traffic.exchange import HttpResponse
from harness.traffic.redaction import Redactor, is_pseudonym

REDACTOR = Redactor.for_contract(CONTRACT, KEY)
tokens = st.builds(lambda s: "tok-" + s, st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
                  blacklist_characters="\ufeff<>&"), min_size=1, max_size=20))
charsets = st.sampled_from(["utf-8", "utf-16", "iso-8859-1"])
#: (recorded, live): the same form, or a <string> document against text/plain (ASMX vs spyne)
forms = st.sampled_from([("xml", "xml"), ("text/plain", "text/plain"), ("json", "json"),
                         ("xml", "text/plain"), ("text/plain", "xml")])


def _answer(binding: Binding, token: str, charset: str, form: str) -> HttpResponse:
    body, headers = _token_answer(binding, token, charset, form)
    return HttpResponse(200, headers, body)


def _recorded(answer: HttpResponse) -> HttpResponse:
    return REDACTOR.response(answer, operation=TOKEN_OP.name)


def _values(diffs) -> list:
    """The differences of value (not of form, which a changed form is anyway)."""
    return [d for d in diffs if d.kind == "text" or d.summary == "body differs"]


@settings(max_examples=120, deadline=None, derandomize=True)
@given(token=tokens, other=tokens, binding=st.sampled_from(list(Binding)),
       charset=charsets, form=forms)
def test_a_recorded_pseudonym_is_compared_by_the_live_values_pseudonym(
        token, other, binding, charset, form):
    recorded_form, live_form = form
    recorded = _recorded(_answer(binding, token, charset, recorded_form))
    assert token.encode() not in recorded.body
    same = _answer(binding, token, charset, live_form)
    values = Pseudonyms(KEY)
    assert not _values(compare_responses(recorded, same, pseudonyms=values))
    if other == token:
        return
    changed = _answer(binding, other, charset, live_form)
    values = Pseudonyms(KEY)
    found = _values(compare_responses(recorded, changed, pseudonyms=values))
    assert len(found) == 1 and values.compared == 1, found
    assert is_pseudonym(found[0].actual.split(" (at")[0]), found  # never the token in clear
    assert other not in str(found[0]) and "compared by pseudonym" in found[0].summary
    blind = Pseudonyms(None)  # without the key: not compared, and counted
    assert not _values(compare_responses(recorded, changed, pseudonyms=blind))
    assert blind.uncompared == 1 and blind.compared == 0


def test_the_very_pseudonym_given_back_is_the_same_value():
    """A mock answers what was recorded: the pseudonym itself is no difference."""
    recorded = _recorded(_answer(Binding.HTTP_GET, "token-for-A10", "utf-8", "xml"))
    values = Pseudonyms(None)
    assert compare_responses(recorded, recorded, pseudonyms=values) == []
    assert values.uncompared == 0
