"""Whether ASMX reads a GET/POST field as a DateTime: the forms of .NET's DateTime.Parse.

A GET/POST field is converted with System.Convert under the invariant culture, so a date takes
DateTime.Parse's many forms rather than XSD's one (and ASMX does so for xs:date and xs:time too).
This models those forms as ASP.NET on Mono reads them (a table recorded from it is in
tests/test_date_forms.py, and the interop lane checks it against the runtime):

- a date of three numbers is year-month-day when the first has four digits, else month/day/year
  (a one- or two-digit year is 19xx from 30, else 20xx); two numbers are month/day (or
  year-month); separators are ``-``, ``/``, ``.``, spaces and commas;
- a month may be named (``Jan``, ``January``) beside a day and/or a year; a day name must be
  the date's weekday;
- a time is ``H:m[:s[.fraction]]`` with an optional AM/PM, and may stand alone; ``T`` joins a
  date to a time; a zone is ``Z``, ``GMT``, ``UTC`` or an offset of at most 14 hours after the
  time;
- the date must exist (no 30 February), years run 1-9999, and a lone number is no date.

It errs towards accepting: a form .NET reads that is not listed here would be a false finding,
one it refuses that is listed only a missed one.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

_MONTH_NAMES = [m.lower() for m in calendar.month_name[1:]]
_MONTHS = {**{m: i for i, m in enumerate(_MONTH_NAMES, 1)},
           **{m[:3]: i for i, m in enumerate(_MONTH_NAMES, 1)}}
_DAY_NAMES = [d.lower() for d in calendar.day_name]  # Monday first, as date.weekday()
_DAYS = {**{d: i for i, d in enumerate(_DAY_NAMES)}, **{d[:3]: i for i, d in enumerate(_DAY_NAMES)}}
_ZONE_WORDS = {"z", "gmt", "utc"}
_MERIDIEM = {"am", "pm"}

_TOKEN = re.compile(r"(?P<time>\d{1,2}:\d{1,2}(?::\d{1,2}(?:\.\d+)?)?(?!\d))|(?P<number>\d+)"
                    r"|(?P<word>[A-Za-z]+)|(?P<sep>[\s,./-]+)", re.ASCII)
#: An offset, read only right after a time (elsewhere a sign is a date separator).
_OFFSET = re.compile(r"\s*(?P<offset>[+-](\d{1,2}):(\d\d))", re.ASCII)

#: A year-less date is judged in a leap year: .NET takes the current year, and 29 February
#: is a real date in some of them.
_LEAP_YEAR = 2000


def accepts_http_datetime(text: str) -> bool:
    """Whether DateTime.Parse (invariant culture) reads ``text``, as ASMX reads a GET/POST
    DateTime field."""
    text = text.strip()
    tokens = _tokens(text) if text[:1].isalnum() else None  # "-2024-01-01" is no date
    if not tokens:
        return False
    kinds = [kind for kind, _ in tokens]
    words = [value.lower() for kind, value in tokens if kind == "word"]
    numbers = [value for kind, value in tokens if kind == "number"]
    times = [value for kind, value in tokens if kind == "time"]
    if len(times) > 1 or not all(_known(word) for word in words):
        return False
    if times and not _valid_time(times[0]):
        return False
    if not all(_valid_offset(value) for kind, value in tokens if kind == "offset"):
        return False
    if "t" in words and not _joins_date_to_time(kinds, words):
        return False
    months = [_MONTHS[w] for w in words if w in _MONTHS]
    if len(months) > 1:
        return False
    if not numbers and not months:
        return bool(times)  # a time alone is today at that time
    day = _date(numbers, months[0] if months else None)
    if day is None:
        return False
    weekdays = {_DAYS[w] for w in words if w in _DAYS}
    return not weekdays or (isinstance(day, date) and weekdays == {day.weekday()})


#: More tokens than any date form has ("Wednesday, January 31, 2024 12:34:56 PM GMT" has 9):
#: a longer text is no date, and reading it no further keeps a hostile value cheap.
_MAX_TOKENS = 16


def _tokens(text: str) -> list[tuple[str, str]] | None:
    """(kind, text) of each token but separators; None when a character fits no token."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if len(tokens) > _MAX_TOKENS:
            return None
        after_time = bool(tokens) and tokens[-1][0] == "time"
        if after_time and (m := _OFFSET.match(text, pos)):
            tokens.append(("offset", m.group("offset")))
        elif m := _TOKEN.match(text, pos):
            if m.lastgroup != "sep":
                tokens.append((m.lastgroup or "", m.group()))
        else:
            return None
        pos = m.end()
    return tokens


def _known(word: str) -> bool:
    return word in _MONTHS or word in _DAYS or word in _ZONE_WORDS or word in _MERIDIEM or (
        word == "t")


def _joins_date_to_time(kinds: list[str], words: list[str]) -> bool:
    """``T`` stands between a number (the date's end) and the time."""
    at = [i for i, kind in enumerate(kinds) if kind == "word"][words.index("t")]
    return 0 < at < len(kinds) - 1 and kinds[at - 1] == "number" and kinds[at + 1] == "time"


def _valid_time(text: str) -> bool:
    hour, minute, *second = text.split(":")
    return int(hour) < 24 and int(minute) < 60 and (
        not second or float(second[0]) < 60)


def _valid_offset(text: str) -> bool:
    hours, minutes = text[1:].split(":")
    return int(hours) * 60 + int(minutes) <= 14 * 60 and int(minutes) < 60


def _date(numbers: list[str], month: int | None) -> date | bool | None:
    """The date the numbers (and a named month) give: a ``date`` when complete, True when it
    lacks a day or year but is valid, None when it is no date."""
    if any(len(n) > 4 for n in numbers):
        return None
    if month is not None:
        return _named_month_date(numbers, month)
    if len(numbers) == 2:
        first, second = numbers
        if len(first) == 4:
            return 1 <= int(second) <= 12 or None
        return _existing(_LEAP_YEAR, int(first), int(second)) and True
    if len(numbers) == 3:
        first, second, third = numbers
        if len(first) >= 3:
            return _existing(_year(first), int(second), int(third))
        return _existing(_year(third), int(first), int(second))
    return None


def _named_month_date(numbers: list[str], month: int) -> date | bool | None:
    if len(numbers) == 1:
        return 1 <= int(numbers[0]) <= 9999 or None
    if len(numbers) == 2:
        first, second = numbers
        return _existing(_year(second), month, int(first)) or _existing(
            _year(first), month, int(second))
    return None


def _year(text: str) -> int:
    """A one- or two-digit year as .NET's invariant calendar reads it (two-digit-year max 2029)."""
    year = int(text)
    if len(text) <= 2:
        return year + (1900 if year >= 30 else 2000)
    return year


def _existing(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None
