"""One ``krb5.conf`` for clusters in several realms: MIT Kerberos reads one configuration
per process (``KRB5_CONFIG``), so a process that logs in to clusters whose ``krb5_conf``
files differ reads a file merged from them (:func:`merge`), written by
:mod:`hbase_migrate.cluster.auth.kerberos` into its private folder; the given files are only read.

The merge keeps every realm of every file (a realm two files describe differently is
refused: two KDCs of one realm name cannot both be right), the first file's value of each
other setting (``[libdefaults]`` and the like; a later file adds the settings the earlier
ones lack), and each host's ``[domain_realm]`` mapping unless two files map it to different
realms: such a host is left unmapped, so a ticket for a service on it is asked of the
client's own realm (MIT's referral realm), which is each cluster's own when they share
hosts or domains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hbase_migrate.cluster.errors import ClusterError

# A relation: "key = value", or "key = {" relations "}".
Relation = tuple[str, "str | list[Relation]"]
DIRECTIVES = ("include", "includedir", "module")


class Krb5ConfConflict(ClusterError):
    """Two ``krb5.conf`` files describe one realm differently."""


@dataclass
class Profile:
    """A parsed profile: top-level directives and sections of relations, in file order."""

    directives: list[str] = field(default_factory=list)
    sections: dict[str, list[Relation]] = field(default_factory=dict)


def parse(text: str) -> Profile:
    """The relations of MIT profile ``text`` (comments dropped, values kept verbatim)."""
    profile = Profile()
    stack: list[list[Relation]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if not stack and line.split(None, 1)[0] in DIRECTIVES:
            profile.directives.append(line)
        elif line.startswith("[") and "]" in line:
            name = line[1:line.index("]")].strip()
            stack = [profile.sections.setdefault(name, [])]
        elif line.startswith("}"):
            if len(stack) > 1:
                stack.pop()
        elif stack and "=" in line:
            key, _, value = (part.strip() for part in line.partition("="))
            if value == "{":
                nested: list[Relation] = []
                stack[-1].append((key, nested))
                stack.append(nested)
            else:
                stack[-1].append((key, value))
    return profile


def render(profile: Profile) -> str:
    lines = list(profile.directives)
    for name, relations in profile.sections.items():
        lines.append(f"[{name}]")
        lines.extend(_relations(relations, 1))
    return "\n".join(lines) + "\n"


def _relations(relations: list[Relation], depth: int) -> list[str]:
    pad = " " * depth
    out: list[str] = []
    for key, value in relations:
        if isinstance(value, list):
            out += [f"{pad}{key} = {{", *_relations(value, depth + 1), f"{pad}}}"]
        else:
            out.append(f"{pad}{key} = {value}")
    return out


def merge(files: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The merged text of ``files`` (``(path, text)`` each, in order of precedence) and the
    hosts or domains left unmapped; :class:`Krb5ConfConflict` for a realm two files
    describe differently."""
    merged = Profile()
    realm_from: dict[str, str] = {}
    mapped: dict[str, str] = {}  # host or domain -> realm
    unmapped: list[str] = []
    for path, text in files:
        profile = parse(text)
        merged.directives += [d for d in profile.directives if d not in merged.directives]
        for name, relations in profile.sections.items():
            into = merged.sections.setdefault(name, [])
            earlier = {key: value for key, value in into}  # from the files before this one
            for key, value in relations:
                if name == "realms" and key in earlier:
                    if _relations([(key, earlier[key])], 0) != _relations([(key, value)], 0):
                        raise Krb5ConfConflict(
                            f"realm {key} is described differently by {realm_from[key]} "
                            f"and {path} (two KDCs of one realm name); give both clusters "
                            "the same krb5_conf for it")
                    continue
                if name == "realms":
                    realm_from.setdefault(key, path)
                elif name == "domain_realm" and mapped.setdefault(key, str(value)) != value:
                    unmapped.append(key)
                if key not in earlier:
                    into.append((key, value))
    if unmapped:
        merged.sections["domain_realm"] = [(k, v) for k, v in merged.sections["domain_realm"]
                                           if k not in unmapped]
    return render(merged), sorted(set(unmapped))
