"""Example data shipped with dpnoise: ``people.csv`` and its schema ``people.toml``.

``people.csv`` holds synthetic survey answers (no real person): up to three rows per person
(``person_id`` repeats, one row per survey wave), public keys (``region``, ``smoker``) and a
text column whose values are not public (``city``).  ``people.toml`` declares the public
bounds, the person id and the contribution caps; ``targets.toml`` is a workload planned from
the precision each table must reach.  ``dpnoise example DIR`` copies the files into
``DIR``; in Python use :func:`copy_to` or :func:`path`.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

from ..errors import ParameterError

#: the files shipped in this package, in the order they are copied
FILES: tuple[str, ...] = ("people.csv", "people.toml", "targets.toml")


def path(name: str) -> Path:
    """Where an example file is installed.

    Parameters
    ----------
    name : str
        One of :data:`FILES` (``"people.csv"``, ``"people.toml"``, ``"targets.toml"``).

    Returns
    -------
    pathlib.Path
        The installed file (read it in place; copy it before editing).

    Raises
    ------
    ParameterError
        If ``name`` is not an example file.
    """
    if name not in FILES:
        raise ParameterError(f"example file must be one of {', '.join(FILES)}, got {name!r}")
    return Path(str(resources.files(__name__).joinpath(name)))


def copy_to(directory: str | Path, *, overwrite: bool = False) -> list[Path]:
    """Copy the example data and schema into ``directory`` (created if missing).

    Parameters
    ----------
    directory : str or pathlib.Path
        Destination directory.
    overwrite : bool, default False
        Replace files that already exist there.

    Returns
    -------
    list of pathlib.Path
        The written files: ``people.csv``, ``people.toml`` and ``targets.toml``.

    Raises
    ------
    ParameterError
        If a file already exists and ``overwrite`` is false (nothing is written then).
    """
    dest = Path(directory)
    targets = [dest / name for name in FILES]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not overwrite:
        raise ParameterError(f"{', '.join(existing)} already exists (pass --force to replace)")
    dest.mkdir(parents=True, exist_ok=True)
    for name, target in zip(FILES, targets, strict=True):
        shutil.copyfile(path(name), target)
    return targets
