"""The exact answer of a query, for the custodian's own checks: NOT private.

:meth:`dpnoise.Session.true_table` returns a :class:`TrueAnswer`, a type distinct from a
:class:`~dpnoise.session.Release` on purpose: it has a ``true_value`` column and no error
bars, no mechanism and no guarantee, and everything that publishes refuses it -- the
table writer behind ``output=`` / ``--output`` (:func:`dpnoise.session.table.write_table`)
and the HTML report (:func:`dpnoise.report.release_html`).  It converts to pandas, polars
and Arrow like a release (:mod:`dpnoise.session.frames`), with ``"private": false`` in
its metadata, so a custodian can join it to a release's table by its key columns and
compare.  For groups whose keys are not public its key column lists every group present
in the data -- including those partition selection would suppress.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ParameterError


@dataclass(frozen=True)
class TrueAnswer:
    """The exact answer per cell of ``query``, with its key columns (custodian only).

    Parameters
    ----------
    query : str
        The query as asked.
    canonical : str
        Its canonical form.
    stat : str
        The statistic.
    group_by : tuple of str
        The group columns.
    group_keys : tuple
        Per group column, its keys.
    true_values : numpy.ndarray
        The exact values, shaped like a release's values.
    """

    query: str
    canonical: str
    stat: str
    group_by: tuple[str, ...]
    group_keys: tuple[Any, ...]  # per group column: its keys (tuple or range)
    true_values: NDArray[Any]  # shaped like a release's values

    #: read by the publishing paths, which refuse a true answer
    custodian_only = True

    def key_arrays(self) -> dict[str, NDArray[Any]]:
        """One array per group column, aligned with ``true_values.ravel()``.

        Returns
        -------
        dict of str to numpy.ndarray
            Group column -> keys.
        """
        if not self.group_by:
            return {}
        grids = np.meshgrid(*[np.asarray(list(k)) if not isinstance(k, range)
                              else np.arange(k.start, k.stop) for k in self.group_keys],
                            indexing="ij")
        return {g: a.ravel() for g, a in zip(self.group_by, grids, strict=True)}

    def columns(self) -> list[str]:
        """The column names: the group columns and ``true_value``.

        Returns
        -------
        list of str
            The names.
        """
        return [*self.group_by, "true_value"]

    def column_arrays(self) -> dict[str, NDArray[Any]]:
        """The table as one array per column.

        Returns
        -------
        dict of str to numpy.ndarray
            Column -> values.
        """
        keys = self.key_arrays()
        return {**{g: np.asarray(keys[g]) for g in self.group_by},
                "true_value": np.asarray(self.true_values).ravel()}

    def rows(self, limit: int | None = None) -> list[tuple[Any, ...]]:
        """The table as tuples ``(key..., true_value)``.

        Parameters
        ----------
        limit : int or None, default None
            At most this many rows (None: all).

        Returns
        -------
        list of tuple
            One tuple per cell.
        """
        cols = list(self.column_arrays().values())
        n = cols[-1].size if limit is None else min(limit, cols[-1].size)
        return list(zip(*(c[:n].tolist() for c in cols), strict=True))

    def metadata(self) -> dict[str, Any]:
        """The answer's facts, marked custodian-only.

        Returns
        -------
        dict
            Query, statistic and the custodian-only mark.
        """
        return {"dpnoise": "true answer (custodian only, NOT private)", "private": False,
                "query": self.query, "canonical": self.canonical, "statistic": self.stat,
                "group_by": list(self.group_by)}

    def to_pandas(self) -> Any:
        """The table as a ``pandas.DataFrame``.

        Returns
        -------
        pandas.DataFrame
            The table.
        """
        from .frames import to_pandas

        return to_pandas(self.column_arrays(), self.metadata())

    def to_polars(self) -> Any:
        """The table as a ``polars.DataFrame``.

        Returns
        -------
        polars.DataFrame
            The table.
        """
        from .frames import to_polars

        return to_polars(self.column_arrays(), self.metadata())

    def to_arrow(self) -> Any:
        """The table as a ``pyarrow.Table``.

        Returns
        -------
        pyarrow.Table
            The table.
        """
        from .frames import to_arrow

        return to_arrow(self.column_arrays(), self.metadata())

    def interval(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: a true answer has no error bars.

        Parameters
        ----------
        *args, **kwargs
            Ignored.

        Returns
        -------
        object
            Never returns.

        Raises
        ------
        ParameterError
            Always.
        """
        raise ParameterError("a true answer has no error bars (it is exact and NOT private)")

    def __repr__(self) -> str:
        return (f"TrueAnswer({self.canonical!r}, cells={np.size(self.true_values)}; "
                "custodian only, NOT private)")
