"""docs/cli.md documents every ``docevals`` subcommand and every long option.

The parser is the source of truth: a new subcommand or option without a line in the
reference fails here. Each option must appear in its own command's section (a
``## docevals <command>`` heading up to the next ``## ``), not merely somewhere on the
page, so shared options are listed under every command that takes them.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from docevals_mlflow.cli import build_parser

CLI_DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
_HEADING = re.compile(r"^## docevals (\S+)\s*$", flags=re.MULTILINE)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _long_options(parser: argparse.ArgumentParser) -> set[str]:
    return {
        option
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
        if option.startswith("--")
    }


def _sections() -> dict[str, str]:
    text = CLI_DOC.read_text(encoding="utf-8")
    sections = {}
    for match in _HEADING.finditer(text):
        end = text.find("\n## ", match.end())
        sections[match.group(1)] = text[match.end() : end if end != -1 else len(text)]
    return sections


def _mentions(text: str, option: str) -> bool:
    # "--run-name" must not be satisfied by "--run-name-x" or by "--run" alone.
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


SUBCOMMANDS = _subcommands()
SECTIONS = _sections()


def test_every_subcommand_has_a_section_and_no_section_is_stale():
    assert set(SECTIONS) == set(SUBCOMMANDS)


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_long_option_is_documented_in_its_command_section(command):
    section = SECTIONS.get(command, "")
    missing = sorted(
        option for option in _long_options(SUBCOMMANDS[command]) if not _mentions(section, option)
    )
    assert not missing, f"docs/cli.md, section 'docevals {command}', lacks {missing}"


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_every_section_has_an_example_and_exit_codes(command):
    section = SECTIONS.get(command, "")
    assert f"```bash\ndocevals {command}" in section or f"\ndocevals {command} " in section
    assert "Exit codes:" in section


def test_documented_options_exist():
    # The reverse direction: an option removed from the parser must leave the page too.
    for command, section in SECTIONS.items():
        known = _long_options(SUBCOMMANDS[command]) | {"--help", "--version"}
        # Printed output (```text blocks) may quote other tools' options, such as the
        # `mlflow ui --backend-store-uri` hint; commands and tables may not.
        prose = re.sub(r"```text\n.*?```", "", section, flags=re.DOTALL)
        documented = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", prose))
        # Options of other tools named in prose (git, mlflow, pip) are not ours to check.
        stale = sorted(documented - known - _foreign_options(section))
        assert not stale, f"docs/cli.md, section 'docevals {command}', names unknown {stale}"


def _foreign_options(section: str) -> set[str]:
    """Options of other commands that a section mentions on purpose (cross-references)."""
    foreign: set[str] = set()
    for other, parser in SUBCOMMANDS.items():
        if f"docevals {other}" in section or f"(#docevals-{other})" in section:
            foreign |= _long_options(parser)
    return foreign
