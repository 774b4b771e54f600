"""Random documents and schemas, built once and read by both engines.

An :class:`Example` is a schema *description* (a tree of :class:`Scalar`,
:class:`Group`, :class:`ScalarList` and :class:`ObjectList` nodes under the field
names of one document class), a well-shaped ground truth and a realistically
perturbed prediction. :func:`our_schema` turns the description into a
:class:`~docevals_mlflow.fields.schema.DocumentSchema` (native form) and
:func:`stickler_json_schema` into the JSON Schema that
``StructuredModel.from_json_schema`` reads, with equivalent comparison rules:

=============  ==========================  ===========================================
ours           Stickler comparator         notes
=============  ==========================  ===========================================
EXACT          ``ExactComparator``         both case-sensitive; threshold 1.0 written
                                           out (Stickler's unnamed default is 0.5)
FUZZY t        ``FuzzyComparator``         ``x-aws-stickler-threshold: t``
LEVENSHTEIN t  ``LevenshteinComparator``   ``x-aws-stickler-threshold: t``
NUMERIC_EXACT  ``NumericComparator``       our threshold is the absolute tolerance;
(tolerance)                                Stickler takes it as
                                           ``x-aws-stickler-comparator-config:
                                           {"absolute_tolerance": tol}``, threshold 1.0
DATE           ``DateComparator``          Stickler's defaults (``dayfirst=None``: an
                                           ambiguous date is read both ways)
=============  ==========================  ===========================================

A list of scalars carries its comparator on the array property (Stickler refuses
it on ``items``); a list of objects carries ``x-aws-stickler-match-threshold`` on
the *item object*. Scalars of text kinds are typed ``string``, numeric fields
``["string", "number"]`` (pydantic must accept both forms), and list items are
nullable so that ``null`` items can be sent.

Everything is drawn from a ``random.Random``: :func:`make_example` serves the
seeded soak (``random.Random(seed)``) and hypothesis (``st.randoms()``) alike.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal, TypeAlias

from docevals_mlflow.fields.schema import DocumentSchema

CLASS_NAME = "Doc"

Kind = Literal["amount", "date", "name", "text", "code"]
KINDS: tuple[Kind, ...] = ("amount", "date", "name", "text", "code")
Family = Literal["scalars", "groups", "scalar_lists", "object_lists", "mixed"]
FAMILIES: tuple[Family, ...] = ("scalars", "groups", "scalar_lists", "object_lists", "mixed")


# --- schema description ------------------------------------------------------------


@dataclass(frozen=True)
class Scalar:
    """A scalar field: its value kind, our method and threshold (the absolute
    tolerance for NUMERIC_EXACT)."""

    kind: Kind
    method: str
    threshold: float


@dataclass(frozen=True)
class Group:
    """An object (IDP group) with named sub-fields."""

    fields: dict[str, Node]


@dataclass(frozen=True)
class ScalarList:
    """A list of scalars compared with one item method."""

    item: Scalar


@dataclass(frozen=True)
class ObjectList:
    """A list of objects paired by optimal assignment."""

    fields: dict[str, Node]
    match_threshold: float


Node: TypeAlias = Scalar | Group | ScalarList | ObjectList


@dataclass
class Example:
    """One schema and one document pair."""

    fields: dict[str, Node]
    expected: dict[str, Any]
    predicted: dict[str, Any]
    note: str = ""

    def restricted(self, names: list[str]) -> Example:
        """The same example with only the top-level fields ``names`` (schema and data)."""
        keep = {name: self.fields[name] for name in names if name in self.fields}
        return Example(
            keep,
            {k: v for k, v in self.expected.items() if k in keep},
            {k: v for k, v in self.predicted.items() if k in keep},
            self.note,
        )


# --- building both schemas ----------------------------------------------------------


def _our_spec(node: Node) -> dict[str, Any]:
    if isinstance(node, Scalar):
        return {"method": node.method, "threshold": node.threshold}
    if isinstance(node, Group):
        return {"fields": {name: _our_spec(child) for name, child in node.fields.items()}}
    if isinstance(node, ScalarList):
        return {"items": _our_spec(node.item)}
    return {
        "match_threshold": node.match_threshold,
        "items": {"fields": {name: _our_spec(child) for name, child in node.fields.items()}},
    }


def our_schema_dict(fields: Mapping[str, Node]) -> dict[str, Any]:
    """The native schema form of a description."""
    return {
        "schema_id": "stickler-differential",
        "classes": [
            {"name": CLASS_NAME, "fields": {name: _our_spec(node) for name, node in fields.items()}}
        ],
    }


def our_schema(fields: Mapping[str, Node]) -> DocumentSchema:
    """Our :class:`DocumentSchema` for a description."""
    return DocumentSchema.model_validate(our_schema_dict(fields))


STICKLER_COMPARATORS = {
    "EXACT": "ExactComparator",
    "FUZZY": "FuzzyComparator",
    "LEVENSHTEIN": "LevenshteinComparator",
    "NUMERIC_EXACT": "NumericComparator",
    "DATE": "DateComparator",
}


def _comparison_keys(scalar: Scalar) -> dict[str, Any]:
    keys: dict[str, Any] = {"x-aws-stickler-comparator": STICKLER_COMPARATORS[scalar.method]}
    if scalar.method in ("FUZZY", "LEVENSHTEIN"):
        keys["x-aws-stickler-threshold"] = scalar.threshold
    else:
        # Named explicitly: an unnamed threshold is 0.5 for Exact and Levenshtein.
        keys["x-aws-stickler-threshold"] = 1.0
    if scalar.method == "NUMERIC_EXACT" and scalar.threshold:
        keys["x-aws-stickler-comparator-config"] = {"absolute_tolerance": scalar.threshold}
    return keys


def _value_type(scalar: Scalar, *, nullable: bool = False) -> list[str] | str:
    types = ["string", "number"] if scalar.method == "NUMERIC_EXACT" else ["string"]
    if nullable:
        types.append("null")
    return types if len(types) > 1 else types[0]


def _stickler_spec(node: Node) -> dict[str, Any]:
    if isinstance(node, Scalar):
        return {"type": _value_type(node), **_comparison_keys(node)}
    if isinstance(node, Group):
        return {
            "type": "object",
            "properties": {name: _stickler_spec(child) for name, child in node.fields.items()},
        }
    if isinstance(node, ScalarList):
        return {
            "type": "array",
            **_comparison_keys(node.item),
            "items": {"type": _value_type(node.item, nullable=True)},
        }
    return {
        "type": "array",
        "items": {
            "type": "object",
            "x-aws-stickler-match-threshold": node.match_threshold,
            "properties": {name: _stickler_spec(child) for name, child in node.fields.items()},
        },
    }


def stickler_json_schema(fields: Mapping[str, Node]) -> dict[str, Any]:
    """The equivalent JSON Schema with ``x-aws-stickler-*`` extensions."""
    return {
        "type": "object",
        "properties": {name: _stickler_spec(node) for name, node in fields.items()},
    }


# --- values -------------------------------------------------------------------------

NAMES = (
    "O'Brien & Sons, Inc.",
    "Müller-Lüdenscheidt GmbH",
    "ACME Corp.",
    "Smith, John A.",
    "Zoë Saldaña",
    "São Paulo Comércio Ltda.",
    "Société Générale S.A.",
    "Johnson & Johnson",
    "AT&T Inc.",
    "McDonald's Restaurants Ltd",
    "L'Oréal Paris",
    "3M Company",
    "Nakamura Trading K.K.",
    "Ørsted A/S",
    "Åke Sjöberg",
    "Dr. Jane Doe-Smith",
    "Ngô Bảo Châu",
    "Bäckerei Groß & Söhne",
    "Contoso Pty. Ltd.",
    "Fabrikam, LLC",
)
TEXTS = (
    "Coffee beans 1kg",
    "Consulting services - March 2024",
    "Office chair (ergonomic)",
    "Shipping & handling",
    "Monthly subscription: Pro plan",
    "Wire transfer ref 88123",
    "Grocery Store #1234",
    "Electricity bill",
    "ATM withdrawal",
    "Rent payment",
    "Salary ACME Corp",
    "Fuel station",
    "Insurance premium",
    "Restaurant - business lunch",
    "Printer toner, black",
    "Hotel 2 nights",
    "Taxi to airport",
    "Software license renewal",
    "Late payment fee",
    "Refund: damaged item",
)
CODE_PREFIXES = ("INV", "PO", "SHP", "ACC", "REF", "ORD")
WHITESPACE = ("  ", " ", "\t", " \n ")
JUNK = ("N/A", "-", "n/a", "null", "TBD")


def _draw_amount(rng: random.Random) -> Decimal:
    roll = rng.random()
    if roll < 0.4:
        cents = rng.randint(1, 9_999)
    elif roll < 0.85:
        cents = rng.randint(10_000, 2_000_000)
    else:
        cents = rng.randint(2_000_000, 900_000_000)
    if rng.random() < 0.15:
        cents = cents - cents % 100  # a whole amount
    value = Decimal(cents) / 100
    return -value if rng.random() < 0.12 else value


def _group(digits: str, sep: str, *, lakh: bool = False) -> str:
    if lakh and len(digits) > 3:
        head, tail = digits[:-3], digits[-3:]
        parts: list[str] = []
        while len(head) > 2:
            parts.insert(0, head[-2:])
            head = head[:-2]
        if head:
            parts.insert(0, head)
        return sep.join([*parts, tail])
    parts = []
    while len(digits) > 3:
        parts.insert(0, digits[-3:])
        digits = digits[:-3]
    parts.insert(0, digits)
    return sep.join(parts)


def _body(
    value: Decimal, thousands: str, decimal: str, *, places: int = 2, lakh: bool = False
) -> str:
    quantum = Decimal(1).scaleb(-places)
    text = f"{abs(value).quantize(quantum, rounding=ROUND_HALF_UP):f}"
    whole, _, fraction = text.partition(".")
    grouped = _group(whole, thousands, lakh=lakh) if thousands else whole
    return grouped + (decimal + fraction if places else "")


AMOUNT_STYLES = (
    "plain",
    "comma",
    "usd",
    "usd_code",
    "rm",
    "eur_de",
    "eur_prefix",
    "yen",
    "inr",
    "inr_lakh",
    "kr",
    "space_fr",
    "chf",
    "gbp",
    "accounting",
    "trailing_minus",
    "json",
)


def format_amount(value: Decimal, style: str) -> Any:
    """``value`` written in one of :data:`AMOUNT_STYLES` (a JSON number for ``json``)."""
    negative = value < 0
    sign = "-" if negative else ""
    if style == "json":
        return float(value) if value != value.to_integral_value() else int(value)
    if style == "plain":
        return sign + _body(value, "", ".")
    if style == "comma":
        return sign + _body(value, ",", ".")
    if style == "usd":
        return sign + "$" + _body(value, ",", ".")
    if style == "usd_code":
        return "USD " + sign + _body(value, ",", ".")
    if style == "rm":
        return sign + "RM" + _body(value, ",", ".")
    if style == "eur_de":
        return sign + _body(value, ".", ",") + " €"
    if style == "eur_prefix":
        return sign + "€" + _body(value, ".", ",")
    if style == "yen":
        return sign + "¥" + _body(value, ",", ".", places=0)
    if style == "inr":
        return sign + "Rs. " + _body(value, ",", ".")
    if style == "inr_lakh":
        return sign + "₹" + _body(value, ",", ".", lakh=True)
    if style == "kr":
        return "kr " + sign + _body(value, "", ",")
    if style == "space_fr":
        return sign + _body(value, " ", ",")
    if style == "chf":
        return "CHF " + sign + _body(value, "'", ".")
    if style == "gbp":
        return sign + "£" + _body(value, ",", ".")
    if style == "accounting":
        body = _body(value, ",", ".")
        return f"({body})" if negative else body
    if style == "trailing_minus":
        return _body(value, ",", ".") + ("-" if negative else "")
    raise ValueError(style)


DATE_FORMATS = (
    "%Y-%m-%d",
    "%d/%m/%Y",
    "%m/%d/%Y",
    "%b %d, %Y",
    "%d.%m.%Y",
    "%d %b %Y",
    "%B %d, %Y",
    "%Y/%m/%d",
    "%d-%b-%Y",
    "%Y%m%d",
    "%a, %d %b %Y",
    "short_us",
    "%Y-%m-%dT%H:%M:%SZ",
    "%d %B %Y",
    "%d/%m/%y",
    "%d %b %Y %H:%M",
)


def format_date(day: date, fmt: str) -> str:
    """``day`` in one of :data:`DATE_FORMATS` (``short_us`` is ``1/5/24``)."""
    if fmt == "short_us":
        return f"{day.month}/{day.day}/{day.year % 100:02d}"
    text = day.strftime(fmt)
    if "%H" in fmt:
        text = text.replace("00:00", f"{9 + day.day % 8:02d}:{day.day * 7 % 60:02d}")
    return text


def _draw_date(rng: random.Random) -> date:
    if rng.random() < 0.1:  # birth dates and old contracts
        start, span = date(1950, 1, 1), 365 * 60
    else:
        start, span = date(2015, 1, 1), 365 * 12
    return start + timedelta(days=rng.randrange(span))


def _draw_code(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        return f"{rng.choice(CODE_PREFIXES)}-{rng.randint(2015, 2026)}-{rng.randint(1, 99999):05d}"
    if roll < 0.75:
        letters = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(2))
        return f"{letters}{rng.randint(10000, 99999)}"
    if roll < 0.9:
        return f"{rng.choice(CODE_PREFIXES)}#{rng.randint(100, 9999)}"
    return str(rng.randint(10**7, 10**10))


@dataclass
class Truth:
    """What a value denotes, so that a prediction can restate it in another form."""

    kind: Kind
    amount: Decimal | None = None
    day: date | None = None


def draw_value(rng: random.Random, kind: Kind) -> tuple[Any, Truth]:
    """A realistic value of ``kind`` and what it denotes."""
    if kind == "amount":
        amount = _draw_amount(rng)
        style = rng.choice(AMOUNT_STYLES)
        if style == "yen":
            amount = amount.to_integral_value()
        return format_amount(amount, style), Truth(kind, amount=amount)
    if kind == "date":
        day = _draw_date(rng)
        return format_date(day, rng.choice(DATE_FORMATS)), Truth(kind, day=day)
    if kind == "name":
        return rng.choice(NAMES), Truth(kind)
    if kind == "text":
        return rng.choice(TEXTS), Truth(kind)
    return _draw_code(rng), Truth(kind)


# --- perturbations ------------------------------------------------------------------


def typo(rng: random.Random, text: str) -> str:
    """One keyboard slip: a character dropped, doubled, replaced or two swapped."""
    if len(text) < 2:
        return text + "x"
    i = rng.randrange(len(text))
    action = rng.random()
    if action < 0.25:
        return text[:i] + text[i + 1 :]
    if action < 0.5:
        return text[:i] + text[i] + text[i:]
    if action < 0.75:
        return text[:i] + rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") + text[i + 1 :]
    j = min(i + 1, len(text) - 1)
    return (
        text[:i] + text[j] + text[i] + text[j + 1 :] if j > i else text[:-2] + text[-1] + text[-2]
    )


def change_case(rng: random.Random, text: str) -> str:
    """UPPER, lower, Title or sWAPPED case."""
    return rng.choice((str.upper, str.lower, str.title, str.swapcase))(text)


def _restate(rng: random.Random, value: Any, truth: Truth) -> Any:
    """The same information written differently."""
    if truth.kind == "amount" and truth.amount is not None:
        styles = [s for s in AMOUNT_STYLES if s != "yen" or truth.amount == int(truth.amount)]
        return format_amount(truth.amount, rng.choice(styles))
    if truth.kind == "date" and truth.day is not None:
        return format_date(truth.day, rng.choice(DATE_FORMATS))
    text = str(value)
    roll = rng.random()
    if truth.kind == "code":
        return text.replace("-", rng.choice((" ", "", "/", "_")))
    if roll < 0.35:  # punctuation lost, as OCR and LLMs do
        return " ".join(
            text.replace("&", "and").replace("'", "").replace(",", "").replace(".", "").split()
        )
    if roll < 0.55:
        return text + rng.choice((".", " ", "  "))
    if roll < 0.75:
        return "  " + text.replace(" ", "  ")
    words = text.split()
    if len(words) > 1:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def _wrong(rng: random.Random, value: Any, truth: Truth) -> Any:
    """A different value of the same kind (sometimes close to the right one)."""
    if truth.kind == "amount" and truth.amount is not None:
        delta = rng.choice(
            (Decimal("0.01"), Decimal("-0.01"), Decimal("0.02"), Decimal(1), Decimal(10))
        )
        amount = truth.amount + delta if rng.random() < 0.7 else truth.amount * 10
        style = rng.choice([s for s in AMOUNT_STYLES if s != "yen"])
        return format_amount(amount, style)
    if truth.kind == "date" and truth.day is not None:
        if rng.random() < 0.4 and truth.day.day <= 12:
            try:  # day and month swapped
                day = truth.day.replace(month=truth.day.day, day=truth.day.month)
            except ValueError:
                day = truth.day + timedelta(days=1)
        else:
            day = truth.day + timedelta(days=rng.choice((-1, 1, 30, 365)))
        return format_date(day, rng.choice(DATE_FORMATS))
    if truth.kind == "date":
        return format_date(_draw_date(rng), rng.choice(DATE_FORMATS))
    other, _ = draw_value(rng, truth.kind)
    return other


def _empty(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.45:
        return MISSING
    if roll < 0.75:
        return None
    if roll < 0.92:
        return ""
    return rng.choice(WHITESPACE)


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""A key left out of its object (removed before the documents are returned)."""


def perturb(rng: random.Random, value: Any, truth: Truth, *, rate: float = 0.4) -> Any:
    """A prediction of ``value``: usually right, else one realistic kind of mistake."""
    if rng.random() >= rate:
        return value
    roll = rng.random()
    if roll < 0.18:
        return typo(rng, str(value))
    if roll < 0.32:
        return change_case(rng, str(value)) if isinstance(value, str) else value
    if roll < 0.58:
        return _restate(rng, value, truth)
    if roll < 0.78:
        return _wrong(rng, value, truth)
    if roll < 0.95:
        return _empty(rng)
    return rng.choice(JUNK)


def _absent_or(rng: random.Random, p_absent: float, make: Callable[[], Any]) -> Any:
    if rng.random() < p_absent:
        return _empty(rng)
    return make()


# --- schemas ------------------------------------------------------------------------

_FIELD_NAMES: dict[Kind, tuple[str, ...]] = {
    "amount": ("total", "subtotal", "tax_amount", "balance", "amount", "unit_price"),
    "date": ("invoice_date", "due_date", "posting_date", "birth_date", "date"),
    "name": ("vendor_name", "customer_name", "payee", "account_holder"),
    "text": ("description", "memo", "notes", "category"),
    "code": ("invoice_number", "account_id", "order_ref", "sku", "iban_ref"),
}
_GROUP_NAMES = ("vendor_address", "bill_to", "payment", "bank", "contact")
_SCALAR_LIST_NAMES = ("reference_numbers", "tags", "emails", "amounts_due", "dates_seen")
_OBJECT_LIST_NAMES = ("line_items", "transactions", "charges", "parties")


@dataclass
class Limits:
    """Sizes of the generated documents."""

    max_fields: int = 6
    max_scalar_items: int = 20
    max_object_items: int = 8
    nested: bool = True
    """Nested groups and lists of scalars inside list items."""


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate = f"{name}_{n}"
        n += 1
    taken.add(candidate)
    return candidate


def _threshold(rng: random.Random, low: float, high: float) -> float:
    return round(rng.uniform(low, high), 2)


def draw_scalar(rng: random.Random, wanted: Kind | None = None) -> Scalar:
    """A scalar field of a random kind with a method that suits it (mostly)."""
    kind: Kind = wanted if wanted is not None else rng.choice(KINDS)
    roll = rng.random()
    if kind == "amount":
        method = "NUMERIC_EXACT" if roll < 0.75 else rng.choice(("EXACT", "FUZZY"))
    elif kind == "date":
        method = "DATE" if roll < 0.75 else rng.choice(("EXACT", "FUZZY", "LEVENSHTEIN"))
    elif kind == "code":
        method = "EXACT" if roll < 0.6 else rng.choice(("LEVENSHTEIN", "FUZZY"))
    else:
        method = rng.choice(("FUZZY", "FUZZY", "LEVENSHTEIN", "EXACT"))
    if method in ("FUZZY", "LEVENSHTEIN"):
        threshold = _threshold(rng, 0.6, 0.95)
    elif method == "NUMERIC_EXACT":
        threshold = rng.choice((0.0, 0.01))
    else:
        threshold = 1.0
    return Scalar(kind, method, threshold)


def _draw_fields(
    rng: random.Random, count: int, taken: set[str], make: Callable[[], Node]
) -> dict[str, Node]:
    out: dict[str, Node] = {}
    for _ in range(count):
        node = make()
        out[_unique(_name_for(rng, node), taken)] = node
    return out


def _name_for(rng: random.Random, node: Node) -> str:
    if isinstance(node, Scalar):
        return rng.choice(_FIELD_NAMES[node.kind])
    if isinstance(node, Group):
        return rng.choice(_GROUP_NAMES)
    if isinstance(node, ScalarList):
        return rng.choice(_SCALAR_LIST_NAMES)
    return rng.choice(_OBJECT_LIST_NAMES)


def draw_group(rng: random.Random, depth: int = 0, *, with_list: bool = True) -> Group:
    """A group of 1 to 4 scalars, sometimes with a nested group or a list of scalars."""

    def child() -> Node:
        roll = rng.random()
        if depth == 0 and roll < 0.12:
            return draw_group(rng, depth + 1, with_list=with_list)
        if with_list and roll < 0.2:
            return ScalarList(draw_scalar(rng))
        return draw_scalar(rng)

    fields = _draw_fields(rng, rng.randint(1, 4), set(), child)
    return Group(fields)


def draw_object_list(rng: random.Random, limits: Limits) -> ObjectList:
    """A list of objects: 1 to 4 scalar attributes, sometimes a nested group or list."""
    taken: set[str] = set()
    fields = _draw_fields(rng, rng.randint(1, 4), taken, lambda: draw_scalar(rng))
    if limits.nested and rng.random() < 0.15:
        fields[_unique(rng.choice(_GROUP_NAMES), taken)] = draw_group(rng, 1, with_list=False)
    if limits.nested and rng.random() < 0.12:
        fields[_unique(rng.choice(_SCALAR_LIST_NAMES), taken)] = ScalarList(draw_scalar(rng))
    return ObjectList(fields, _threshold(rng, 0.3, 0.9))


def draw_schema(rng: random.Random, family: Family, limits: Limits) -> dict[str, Node]:
    """The fields of one document class, shaped by ``family``."""
    taken: set[str] = set()
    fields: dict[str, Node] = {}

    def add(node: Node) -> None:
        fields[_unique(_name_for(rng, node), taken)] = node

    if family == "scalars":
        for _ in range(rng.randint(1, limits.max_fields)):
            add(draw_scalar(rng))
    elif family == "groups":
        for _ in range(rng.randint(1, 3)):
            add(draw_group(rng))
        for _ in range(rng.randint(0, 2)):
            add(draw_scalar(rng))
    elif family == "scalar_lists":
        for _ in range(rng.randint(1, 3)):
            add(ScalarList(draw_scalar(rng)))
    elif family == "object_lists":
        for _ in range(rng.randint(1, 2)):
            add(draw_object_list(rng, limits))
    else:
        for _ in range(rng.randint(2, limits.max_fields)):
            roll = rng.random()
            if roll < 0.45:
                add(draw_scalar(rng))
            elif roll < 0.65:
                add(draw_group(rng))
            elif roll < 0.82:
                add(ScalarList(draw_scalar(rng)))
            else:
                add(draw_object_list(rng, limits))
    return fields


# --- documents ----------------------------------------------------------------------


@dataclass
class _Drawn:
    """A generated expected value with what its leaves denote (for perturbing)."""

    value: Any
    truths: Any = None
    children: dict[str, _Drawn] = field(default_factory=dict)
    items: list[_Drawn] = field(default_factory=list)


def _count(rng: random.Random, mean: float, cap: int) -> int:
    """A list length: exponential with ``mean``, at most ``cap``."""
    return min(cap, int(-math.log(max(1e-9, 1.0 - rng.random())) * mean))


def _draw_expected(rng: random.Random, node: Node, limits: Limits) -> _Drawn:
    if isinstance(node, Scalar):
        if rng.random() < 0.15:
            return _Drawn(_empty(rng))
        if rng.random() < 0.01:
            return _Drawn(rng.choice(JUNK), Truth(node.kind))
        value, truth = draw_value(rng, node.kind)
        if isinstance(value, (int, float)) and node.method != "NUMERIC_EXACT":
            value = str(value)
        return _Drawn(value, truth)
    if isinstance(node, Group):
        roll = rng.random()
        if roll < 0.12:
            return _Drawn(rng.choice((MISSING, None)))
        if roll < 0.15:
            return _Drawn({})
        children = {name: _draw_expected(rng, child, limits) for name, child in node.fields.items()}
        return _Drawn({k: d.value for k, d in children.items()}, children=children)
    if isinstance(node, ScalarList):
        if rng.random() < 0.12:
            return _Drawn(rng.choice((MISSING, None, [])))
        count = _count(rng, 4.0, limits.max_scalar_items)
        items = []
        for _ in range(count):
            roll = rng.random()
            if roll < 0.03:
                items.append(_Drawn(rng.choice(("", None))))
            elif roll < 0.04:
                items.append(_Drawn(rng.choice(WHITESPACE)))
            else:
                value, truth = draw_value(rng, node.item.kind)
                if isinstance(value, (int, float)) and node.item.method != "NUMERIC_EXACT":
                    value = str(value)
                items.append(_Drawn(value, truth))
        return _Drawn([d.value for d in items], items=items)
    if rng.random() < 0.1:
        return _Drawn(rng.choice((MISSING, None, [])))
    count = min(
        limits.max_object_items, _count(rng, 3.0, limits.max_object_items) + (rng.random() < 0.7)
    )
    items = [_draw_item(rng, node, limits) for _ in range(count)]
    return _Drawn([d.value for d in items], items=items)


def _draw_item(rng: random.Random, node: ObjectList, limits: Limits) -> _Drawn:
    if rng.random() < 0.04:  # a section header: only an unconfigured key
        return _Drawn({"note": rng.choice(("Services", "Page 2", "Subtotal carried"))})
    children = {}
    for name, child in node.fields.items():
        drawn = _draw_expected(rng, child, limits)
        if isinstance(child, Scalar) and drawn.value is MISSING and rng.random() < 0.5:
            drawn = _Drawn(None)
        children[name] = drawn
    value = {k: d.value for k, d in children.items()}
    if rng.random() < 0.08:
        value["note"] = rng.choice(("see attachment", "approved", "x"))
    return _Drawn(value, children=children)


def _predict(rng: random.Random, node: Node, drawn: _Drawn, limits: Limits) -> Any:
    value = drawn.value
    if isinstance(node, Scalar):
        if value is MISSING or value is None or (isinstance(value, str) and not value.strip()):
            if rng.random() < 0.2:  # something predicted where nothing was expected
                invented, _ = draw_value(rng, node.kind)
                return invented if node.method == "NUMERIC_EXACT" else str(invented)
            return value if rng.random() < 0.6 else _empty(rng)
        predicted = perturb(rng, value, drawn.truths or Truth(node.kind))
        if isinstance(predicted, (int, float)) and node.method != "NUMERIC_EXACT":
            predicted = str(predicted)
        return predicted
    if isinstance(node, Group):
        roll = rng.random()
        if roll < 0.07:
            return rng.choice((MISSING, None))
        if roll < 0.09:
            return {}
        if not isinstance(value, dict):
            if rng.random() < 0.7:
                return value
            drawn = _draw_expected(rng, node, limits)
            value = drawn.value
            if not isinstance(value, dict):
                return value
        out = {}
        for name, child in node.fields.items():
            child_drawn = drawn.children.get(name) or _Drawn(MISSING)
            out[name] = _predict(rng, child, child_drawn, limits)
        return out
    if isinstance(node, ScalarList):
        return _predict_scalar_list(rng, node, drawn, limits)
    return _predict_object_list(rng, node, drawn, limits)


def _predict_scalar_list(
    rng: random.Random, node: ScalarList, drawn: _Drawn, limits: Limits
) -> Any:
    if not isinstance(drawn.value, list) or not drawn.value:
        if rng.random() < 0.25:
            count = rng.randint(1, 3)
            out = []
            for _ in range(count):
                value, _ = draw_value(rng, node.item.kind)
                out.append(value if node.item.method == "NUMERIC_EXACT" else str(value))
            return out
        return drawn.value if rng.random() < 0.6 else rng.choice((MISSING, None, []))
    if rng.random() < 0.05:
        return rng.choice((MISSING, None, []))
    out = []
    for item in drawn.items:
        if rng.random() < 0.1:
            continue  # dropped
        if item.value is None or (isinstance(item.value, str) and not item.value.strip()):
            out.append(item.value)
            continue
        predicted = perturb(rng, item.value, item.truths or Truth(node.item.kind), rate=0.3)
        if predicted is MISSING:
            continue
        if isinstance(predicted, (int, float)) and node.item.method != "NUMERIC_EXACT":
            predicted = str(predicted)
        out.append(predicted)
    while rng.random() < 0.2 and len(out) < limits.max_scalar_items:
        value, _ = draw_value(rng, node.item.kind)
        out.append(value if node.item.method == "NUMERIC_EXACT" else str(value))
    if out and rng.random() < 0.08:
        out.append(rng.choice(out))  # a duplicate
    if rng.random() < 0.6:
        rng.shuffle(out)
    return out


def _predict_object_list(
    rng: random.Random, node: ObjectList, drawn: _Drawn, limits: Limits
) -> Any:
    if not isinstance(drawn.value, list) or not drawn.value:
        if rng.random() < 0.25:
            return [_draw_item(rng, node, limits).value for _ in range(rng.randint(1, 3))]
        return drawn.value if rng.random() < 0.6 else rng.choice((MISSING, None, []))
    if rng.random() < 0.04:
        return rng.choice((MISSING, None, []))
    out = []
    for item in drawn.items:
        if rng.random() < 0.1:
            continue
        if not item.children:  # a section header
            out.append(copy.deepcopy(item.value))
            continue
        predicted = {}
        for name, child in node.fields.items():
            predicted[name] = _predict(
                rng, child, item.children.get(name) or _Drawn(MISSING), limits
            )
        if "note" in item.value and rng.random() < 0.7:
            predicted["note"] = item.value["note"]
        out.append(predicted)
    if len(out) >= 2 and rng.random() < 0.12:  # one attribute's values swapped between items
        a, b = rng.sample(range(len(out)), 2)
        key = rng.choice(list(node.fields))
        if key in out[a] and key in out[b]:
            out[a][key], out[b][key] = out[b][key], out[a][key]
    while rng.random() < 0.2 and len(out) < limits.max_object_items:
        out.append(_draw_item(rng, node, limits).value)
    if rng.random() < 0.6:
        rng.shuffle(out)
    return out


def strip_missing(value: Any) -> Any:
    """``value`` with :data:`MISSING` keys and items removed."""
    if isinstance(value, dict):
        return {k: strip_missing(v) for k, v in value.items() if v is not MISSING}
    if isinstance(value, list):
        return [strip_missing(v) for v in value if v is not MISSING]
    return value


def make_example(
    rng: random.Random, family: Family = "mixed", limits: Limits | None = None
) -> Example:
    """A random schema of ``family`` with one ground truth and one prediction."""
    limits = limits or Limits()
    fields = draw_schema(rng, family, limits)
    expected: dict[str, Any] = {}
    predicted: dict[str, Any] = {}
    for name, node in fields.items():
        drawn = _draw_expected(rng, node, limits)
        expected[name] = drawn.value
        predicted[name] = _predict(rng, node, drawn, limits)
    if rng.random() > 0.9:  # a field the schema does not configure
        predicted["page_count"] = str(rng.randint(1, 9))
        if rng.random() > 0.5:
            expected["page_count"] = str(rng.randint(1, 9))
    return Example(fields, strip_missing(expected), strip_missing(predicted))


def examples(
    seed: int, count: int, family: Family | None = None, limits: Limits | None = None
) -> Iterator[Example]:
    """``count`` seeded examples (cycling through the families unless one is given)."""
    for index in range(count):
        rng = random.Random(f"{seed}:{index}")
        yield make_example(rng, family or FAMILIES[index % len(FAMILIES)], limits)
