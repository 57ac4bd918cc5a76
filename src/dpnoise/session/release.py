"""``Release``: one private answer with its keys, error bars, guarantee and rules; and
a release prepared from public facts before anything is reserved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DpnoiseError, ParameterError
from .adapter import Plan
from .declared import rules_in_words
from .query import Query
from .rank_bar import rank_bar_note
from .table import positive_zero


@dataclass(frozen=True)
class Release:
    """A released statistic: private values per public cell, with its provenance.

    Parameters
    ----------
    query : str
        The query as asked.
    canonical : str
        Its canonical form (what the ledger compares for replay).
    stat : str
        The statistic: count, sum, mean, variance, stddev or quantile.
    group_by : tuple of str
        The group columns.
    group_keys : tuple
        Per group column, its released keys.
    values : numpy.ndarray
        The private values, one axis per group column (shape () for a scalar).
    mechanism : str
        The mechanism of each component.
    epsilon, delta : float
        The release's guarantee.
    guarantee : str
        The guarantee in words (per row or per individual).
    ledger_id : int or None
        The release's number in the ledger.
    replayed : bool, default False
        Whether it was served from the ledger.
    details : dict, default {}
        Public facts about the calibration.
    ledger_head : str or None, default None
        The ledger's head hash after this release.
    confidence : float, default 0.95
        The default confidence of :meth:`interval`.
    declared : dict, default {}
        The schema's rules behind the numbers (clamping bounds, contribution caps), as
        :func:`dpnoise.session.declared.declared_rules` gives them.
    bar : {"level", "rank"}, default "level"
        A quantile's error bar: levels (with a noisy count) or ranks
        (:mod:`dpnoise.session.rank_bar`: :meth:`rank_bar`, no count).
    """

    query: str
    canonical: str
    stat: str
    group_by: tuple[str, ...]
    group_keys: tuple[Any, ...]  # per group column: its public keys (tuple or range)
    values: NDArray[Any]  # shape = number of keys per group column; () for a scalar
    mechanism: str
    epsilon: float
    delta: float
    guarantee: str
    ledger_id: int | None
    replayed: bool = False
    details: dict[str, Any] = field(default_factory=dict, compare=False)
    ledger_head: str | None = None  # the ledger's head hash after this release (an anchor)
    confidence: float = 0.95
    _intervals: Any = field(default=None, compare=False, repr=False)
    #: the schema's rules behind the numbers (:func:`dpnoise.session.declared.declared_rules`)
    declared: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    bar: str = "level"

    @property
    def interval_kind(self) -> str:
        """``value`` (the interval holds the true value), ``level`` for a quantile (the
        released value is an empirical p-quantile for p in the interval), or ``rank`` for
        a quantile released ``with rank bar`` (:meth:`rank_bar`)."""
        if self.stat != "quantile":
            return "value"
        return "rank" if self.bar == "rank" else "level"

    def rank_bar(self, confidence: float | None = None
                 ) -> tuple[NDArray[Any], NDArray[Any]]:
        """``(rank_error, level_slack)`` arrays shaped like ``values``, for a quantile
        released ``with rank bar``: at ``confidence`` (default: the release's), at once for
        all cells and levels, each released value is an empirical q-quantile of its cell's
        snapped values up to a rank error of ``rank_error + level_slack·n`` rows (``n`` the
        cell's rows, not released).  Public parameters only (:mod:`dpnoise.session.rank_bar`).

        Parameters
        ----------
        confidence : float or None, default None
            In (0, 1); None: the release's ``confidence``.

        Returns
        -------
        tuple of numpy.ndarray
            ``(rank_error, level_slack)``.

        Raises
        ------
        ParameterError
            If the release's error bar is not stated in ranks.
        """
        if self.interval_kind != "rank":
            raise ParameterError("rank_bar(): this release's error bar is not stated in "
                                 "ranks (ask for it with bar='rank' / 'with rank bar'); "
                                 "see interval()")
        return self.error_bars(confidence)

    def error_bars(self, confidence: float | None = None) -> tuple[NDArray[Any], NDArray[Any]]:
        """The two error-bar arrays of this release's kind (:attr:`interval_kind`): an
        interval's ends (``interval()``) or the rank bar (``rank_bar()``) -- the error-bar
        columns of :meth:`rows` and of a written table.

        Parameters
        ----------
        confidence : float or None, default None
            In (0, 1); None: the release's ``confidence``.

        Returns
        -------
        tuple of numpy.ndarray
            ``(low, high)``, or ``(rank_error, level_slack)`` for a rank bar.

        Raises
        ------
        ParameterError
            If the release carries no error bars or ``confidence`` is not in (0, 1).
        """
        from ..laws.base import check_level

        if self._intervals is None:
            raise ParameterError("this release carries no error bars (replayed from a "
                                 "ledger entry whose components were not recorded, or "
                                 "written by the executors)")
        conf = self.confidence if confidence is None else check_level(confidence)
        lo, hi = self._intervals(conf)
        return positive_zero(lo), positive_zero(hi)

    def interval(self, confidence: float | None = None) -> tuple[NDArray[Any], NDArray[Any]]:
        """``(low, high)`` arrays shaped like ``values``: a confidence set for each cell's
        true value at ``confidence`` (default: the release's), computed from the
        released output and public parameters only (:mod:`dpnoise.session.intervals`);
        conservative.  For a quantile: an interval of quantile levels.

        Parameters
        ----------
        confidence : float or None, default None
            In (0, 1); None: the release's ``confidence``.

        Returns
        -------
        tuple of numpy.ndarray
            ``(low, high)``.

        Raises
        ------
        ParameterError
            If the release carries no error bars (replayed from a ledger entry without recorded
            components), states them in ranks (:meth:`rank_bar`) or ``confidence`` is not
            in (0, 1).
        """
        if self.interval_kind == "rank":
            raise ParameterError("this quantile's error bar is stated in ranks (released "
                                 "'with rank bar', no noisy count): see rank_bar(); no "
                                 "interval of values or levels exists without the row count")
        return self.error_bars(confidence)

    def _repr_html_(self) -> str:
        """Notebook display: the released table and the error law at a public point."""
        from ..views import html_of

        return html_of("release", self)

    @property
    def value(self) -> Any:
        """The scalar answer (queries without GROUP BY)."""
        if self.values.ndim:
            raise ParameterError("a grouped release has many values: use .values / .rows()")
        return self.values.item()

    def key_arrays(self) -> dict[str, NDArray[Any]]:
        """One array per group column, aligned with ``values.ravel()``.

        Returns
        -------
        dict of str to numpy.ndarray
            Group column -> keys.
        """
        if not self.group_by:
            return {}
        grids = np.meshgrid(*[np.asarray(list(k) if not isinstance(k, range)
                                         else np.arange(k.start, k.stop))
                              for k in self.group_keys], indexing="ij")
        return {g: a.ravel() for g, a in zip(self.group_by, grids, strict=True)}

    def rows(self, limit: int | None = None, intervals: bool = True
             ) -> list[tuple[Any, ...]]:
        """The released cells as tuples, in the order of :meth:`columns` (with the same
        ``intervals`` default: ``pd.DataFrame(r.rows(), columns=r.columns())`` works).

        Parameters
        ----------
        limit : int or None, default None
            At most this many rows (None: all).
        intervals : bool, default True
            Add the error-bar columns.

        Returns
        -------
        list of tuple
            One tuple per cell.
        """
        flat = positive_zero(self.values.ravel())
        n = flat.size if limit is None else min(limit, flat.size)
        keys = self.key_arrays()
        lo = hi = None
        if intervals and self._intervals is not None:
            lo, hi = (np.asarray(a).ravel() for a in self.error_bars())
        return [(*tuple(item_of(keys[g][i]) for g in self.group_by), flat[i].item(),
                 *((lo[i].item(), hi[i].item()) if lo is not None else ()))  # type: ignore[index]
                for i in range(n)]

    def columns(self, intervals: bool = True) -> list[str]:
        """The column names of :meth:`rows`: the group columns, the statistic, and ``low``,
        ``high`` (``level_low``, ``level_high`` for a quantile).

        Parameters
        ----------
        intervals : bool, default True
            Include the error-bar columns.

        Returns
        -------
        list of str
            The names.
        """
        extra: list[str] = []
        if intervals and self._intervals is not None:
            extra = {"level": ["level_low", "level_high"], "rank": ["rank_error", "level_slack"]
                     }.get(self.interval_kind, ["low", "high"])
        return [*self.group_by, self.stat, *extra]

    def has_intervals(self) -> bool:
        """Whether this release carries error bars (see :meth:`interval`).

        Returns
        -------
        bool
            True when :meth:`interval` can compute error bars.
        """
        return self._intervals is not None

    def metadata(self) -> dict[str, Any]:
        """The release's public facts (confidence, guarantee, mechanism, epsilon, delta,
        query, ledger row) -- what :meth:`to_pandas` & co. attach as metadata.

        Returns
        -------
        dict
            Public facts only.
        """
        from .frames import release_metadata

        return release_metadata(self)

    def to_pandas(self) -> Any:
        """The released table as a ``pandas.DataFrame``: key columns, the value (named
        after the statistic), ``low``/``high``; :meth:`metadata` as ``df.attrs``.  Only
        released cells appear (:mod:`dpnoise.session.frames`).

        Returns
        -------
        pandas.DataFrame
            The table.
        """
        from .frames import frame_columns, to_pandas

        return to_pandas(frame_columns(self), self.metadata())

    def to_polars(self) -> Any:
        """The released table as a ``polars.DataFrame`` (see :meth:`to_pandas`).

        Returns
        -------
        polars.DataFrame
            The table.
        """
        from .frames import frame_columns, to_polars

        return to_polars(frame_columns(self), self.metadata())

    def to_arrow(self) -> Any:
        """The released table as a ``pyarrow.Table``, :meth:`metadata` on its schema.

        Returns
        -------
        pyarrow.Table
            The table.
        """
        from .frames import frame_columns, to_arrow

        return to_arrow(frame_columns(self), self.metadata())

    def table(self, limit: int = 20) -> str:
        """The released table as aligned text, with ``low``/``high`` and the interval note.

        Parameters
        ----------
        limit : int, default 20
            At most this many rows are printed.

        Returns
        -------
        str
            The table.
        """
        with_iv = self._intervals is not None
        head = self.columns(with_iv)
        body = [[format(c, ".10g") if isinstance(c, float) else printable(str(c)) for c in r]
                for r in self.rows(limit, intervals=with_iv)]
        widths = [max([len(h), *(len(r[i]) for r in body)]) for i, h in enumerate(head)]
        lines = ["  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True))]
        lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in body]
        if self.values.size > limit:
            lines.append(f"... ({self.values.size} cells)")
        if with_iv:
            lines.append(f"({self.confidence:g} confidence; {self.interval_note()})")
        lines.append(self.rules_text())
        return "\n".join(lines)

    def rules_text(self) -> str:
        """The clamping bounds and contribution cap behind these numbers, in words.

        Returns
        -------
        str
            One or two sentences (or a note that the rules were not recorded).
        """
        return rules_in_words(self.declared)

    def interval_note(self) -> str:
        """How the error bars were obtained (one line, public).

        Returns
        -------
        str
            The note printed under the table.
        """
        note = ("intervals from the released output and public parameters only, by "
                "inverting each component's test, union bound; conservative")
        if self.interval_kind == "rank":
            note = rank_bar_note()
        elif self.interval_kind == "level":
            note = ("level_low/level_high: the released value is an empirical p-quantile "
                    "(data snapped to the public grid) for p in [level_low, level_high]; "
                    + note)
        sel = self.details.get("selection")
        if sel:
            unit = "rows: each cell's noisy count" if sel.get("on") == "count" else "persons"
            cover = ("; an error bar's coverage is unconditional (P(released and missed) <= "
                     "1 - confidence), lower for a group near the threshold given that it "
                     "was released") if sel.get("on") == "count" else ""
            note += (f"; groups selected by DP partition selection (threshold "
                     f"{sel['threshold']} {unit}){cover}: which groups appear is itself noisy -- "
                     f"groups near the threshold appear only when their selection noise was "
                     f"high, so the released set over-represents them and totals over it "
                     f"undercount; a group not shown has at most {sel['suppressed_bound']} "
                     f"persons at this confidence")
        return note


@dataclass(frozen=True)
class PendingRelease:
    """A release prepared from public facts only
    (:func:`~dpnoise.session.execution.prepare_release`): what its ledger reservation holds
    and what runs once that reservation is made."""

    q: Query
    plans: list[tuple[str, Any]]
    eps: float
    dl: float
    mech_name: str
    key: str  # the replay key
    private: bool  # groups chosen by partition selection
    group_keys: tuple[Any, ...]
    guarantee: str
    executors: bool  # noised on the Spark executors and written to output
    output: str | None
    confidence: float
    reservation: dict[str, Any]  # Ledger.reserve's keyword arguments
    legacy_key: str | None = None  # the replay key under the fingerprint with the file size


def item_of(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def write_on_executors(engine: Any, rid: int, q: Query, plans: list[tuple[str, Plan]],
                          output: str, driver_key: bytes,
                          confidence: float = 0.95) -> dict[str, Any]:
    """Noise and write on the executors, after the release's complete event is durable
    (so no output exists that the ledger does not record).  ``driver_key``: 256 bits
    from the release's random source, drawn after the reservation (a SeededRandom makes
    it reproducible, for tests); it travels only in the noise closure.  A failure here
    keeps the charge (the release is recorded) and raises a fixed message."""
    try:
        return engine.release_to(q, dict(plans), str(output), driver_key,
                                      confidence)
    except Exception:
        raise DpnoiseError(
            f"release {rid} is recorded in the ledger (its charge is kept) but writing it "
            f"on the executors to {str(output)!r} failed; the cause is withheld because "
            "it could depend on the data"
        ) from None


def printable(text: str) -> str:
    """A released key as one line of the text table: characters that are not printable
    (line breaks, NUL, other controls) as Python escapes, so that a key read from the data
    cannot break the table's lines or forge rows in it (csv / json / parquet keep it as is)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
