"""Costs as formulas in the inputs' symbolic dims: "2.36 G·batch·sequence + 18.9 M·batch·sequence²".

A shape inference leaves dims as names or expressions of the inputs' dims (onnxruntime's
symbolic inference writes "2*sequence", "sequence + 1"). Read as polynomials, they carry the
FLOPs formulas of costs.py through unchanged: a product of dims is a product of polynomials.

Poly is the whole algebra needed, with no eval anywhere: a dim's text is parsed (dim_names.evaluate)
into sums, differences and products of whole numbers and the inputs' dim names only. Anything else
(a division, a floor, a comparison, a name that isn't an input's dim) is not a polynomial here:
the operation raises TypeError and the node counts as unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..onnx_io.dim_names import MAX_EXPRESSION, MAX_POWER, evaluate

Monomial = tuple[tuple[str, int], ...]  # ((symbol, power), ...), sorted; () is the constant term

MAX_DIM_TEXT = MAX_EXPRESSION  # a dim's expression longer than this is no input-dim formula
MAX_TERMS = 64  # a polynomial growing past this many terms is given up (unknown)


class Poly:
    """A polynomial with whole coefficients in named symbols. Adds and multiplies with ints and
    Polys; comparing, dividing or asking its truth raise TypeError (not a number here)."""

    __slots__ = ("terms",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, terms: Mapping[Monomial, int]):
        self.terms = {m: c for m, c in terms.items() if c}
        if len(self.terms) > MAX_TERMS:
            raise TypeError("too many terms")

    @staticmethod
    def symbol(name: str) -> Poly:
        return Poly({((name, 1),): 1})

    @staticmethod
    def of(x: Poly | int) -> Poly:
        if isinstance(x, Poly):
            return x
        if isinstance(x, int) and not isinstance(x, bool):
            return Poly({(): x})
        raise TypeError(f"not a polynomial: {type(x).__name__}")

    def __add__(self, other: Poly | int) -> Poly:
        out = dict(self.terms)
        for m, c in Poly.of(other).terms.items():
            out[m] = out.get(m, 0) + c
        return Poly(out)

    __radd__ = __add__

    def __neg__(self) -> Poly:
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, other: Poly | int) -> Poly:
        return self + -Poly.of(other)

    def __rsub__(self, other: Poly | int) -> Poly:
        return Poly.of(other) + -self

    def __mul__(self, other: Poly | int) -> Poly:
        out: dict[Monomial, int] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in Poly.of(other).terms.items():
                m = _times(m1, m2)
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    __rmul__ = __mul__

    def _refuse(self, *_args):
        raise TypeError("a formula has no value to compare or divide")

    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __floordiv__ = __rfloordiv__ = __truediv__ = __rtruediv__ = __mod__ = _refuse
    __bool__ = __int__ = __index__ = __float__ = _refuse

    def at(self, values: Mapping[str, int]) -> Poly:
        """The polynomial with the symbols of `values` given their sizes (the rest stay symbols)."""
        out: dict[Monomial, int] = {}
        for m, c in self.terms.items():
            kept = []
            for name, p in m:
                if name in values:
                    c *= values[name] ** p
                else:
                    kept.append((name, p))
            out[tuple(kept)] = out.get(tuple(kept), 0) + c
        return Poly(out)

    def constant(self) -> int | None:
        """Its value when it has no symbol left, else None."""
        if not self.terms:
            return 0
        return self.terms.get(()) if set(self.terms) == {()} else None


def _times(a: Monomial, b: Monomial) -> Monomial:
    powers = dict(a)
    for name, p in b:
        powers[name] = powers.get(name, 0) + p
    if any(p > MAX_POWER * 2 for p in powers.values()):
        raise TypeError("power too high")
    return tuple(sorted(powers.items()))


def parse_dim(text: str, symbols: Iterable[str]) -> Poly | int | None:
    """A dim's text as a whole number or a polynomial in `symbols` (the inputs' dim names), or
    None when it is neither (another name, a division, a call, anything longer than a formula)."""
    allowed = set(symbols)
    if not isinstance(text, str) or len(text) > MAX_DIM_TEXT:
        return None
    if text in allowed:  # an unnamed dim's "x[0]" too, which reads as no expression
        return Poly.symbol(text)

    def symbol(name: str) -> Poly:
        if name not in allowed:
            raise KeyError(name)
        return Poly.symbol(name)

    value = evaluate(text, symbol)
    if isinstance(value, Poly) and value.constant() is not None:
        return value.constant()
    return value


class SymbolicDims(Mapping[str, "Poly | int"]):
    """dim_param -> its polynomial, for costs.py's shape reading: the params that parse are in it."""

    def __init__(self, symbols: Iterable[str]):
        self.symbols = tuple(symbols)
        self._cache: dict[str, Poly | int | None] = {}

    def _parsed(self, key: str) -> Poly | int | None:
        if key not in self._cache:
            self._cache[key] = parse_dim(key, self.symbols)
        return self._cache[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._parsed(key) is not None

    def __getitem__(self, key: str) -> Poly | int:
        value = self._parsed(key)
        if value is None:
            raise KeyError(key)
        return value

    def __iter__(self):
        return iter(k for k, v in self._cache.items() if v is not None)

    def __len__(self) -> int:
        return sum(1 for v in self._cache.values() if v is not None)


def terms(value: Poly | int) -> list[dict]:
    """[{"coefficient", "symbols": {name: power}}], the highest degree first: the formula as data."""
    poly = Poly.of(value)
    ordered = sorted(poly.terms.items(), key=lambda mc: (-sum(p for _, p in mc[0]), mc[0]))
    return [{"coefficient": c, "symbols": dict(m)} for m, c in ordered]


def terms_at(listed: list[dict], values: Mapping[str, int]) -> list[dict]:
    """terms() of a formula given as data, with the symbols of `values` given their sizes."""
    poly = Poly({tuple(sorted(t["symbols"].items())): t["coefficient"] for t in listed})
    return terms(poly.at(values))
