"""The project's Varlink interface files must parse with the independent Python
`varlink` package, not only with our own IDL parser."""

import pathlib

import pytest
import varlink

INTERFACES = pathlib.Path(__file__).resolve().parents[2] / "Sources" / "ProctorProtocol" / "Interfaces"


@pytest.mark.parametrize(
    "name, methods",
    [
        ("io.proctor.Agent", {"Register", "ReportEvent", "Decide", "Subscribe", "AcknowledgeWipe", "ReportFeedback",
                              "GetDataKey", "GetInfo"}),
        (
            "io.proctor.Admin",
            {"Status", "ListApps", "GetApp", "GetPolicy", "ValidatePolicy", "ApplyPolicy", "ApplyBundle", "Reload", "Decide",
             "Wipe", "Notify", "PolicyHistory", "RollbackPolicy", "Events", "EventHistory"},
        ),
    ],
)
def test_interface_parses_with_python_varlink(name, methods):
    text = (INTERFACES / f"{name}.varlink").read_text()
    interface = varlink.Interface(text)
    assert interface.name == name
    # The package keeps types, methods and errors together in `members`; its method class is private.
    parsed_methods = {key for key, member in interface.members.items() if type(member).__name__ == "_Method"}
    assert parsed_methods == methods
    # The package reads a method's signature text up to the first `)`: a field comment holding
    # one inside the method's parentheses would cut it short.
    for method in methods:
        signature = interface.members[method].signature
        assert signature is not None and signature.count("(") == signature.count(")") == 2, f"{method}: {signature!r}"


def test_python_varlink_rejects_a_broken_interface():
    with pytest.raises(SyntaxError):
        varlink.Interface("interface io.proctor.Broken\nmethod Missing(x: ) -> ()\n")
