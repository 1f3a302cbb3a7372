"""draw-tree: a decision tree as Graphviz dot, as Kaldi's TreeRenderer prints it
(src/tree/tree-renderer.cc, src/bin/draw-tree.cc).

Nodes are numbered in the order Kaldi's renderer meets them (depth first, "yes" before "no",
table children in order); a table over a phone position has no edge for its slot 0 (phone 0 is
"no phone"). With a query (pdf-class/phone/.../phone) the path it takes is drawn red and thick.
"""
from __future__ import annotations

from typing import Mapping, Optional

from nnetmix.errors import FormatError
from nnetmix.kaldi.context_dep import (PDF_CLASS_KEY, ConstantEventMap, ContextDependency,
                                       SplitEventMap, TableEventMap)

__all__ = ["render_tree", "parse_query"]

_EDGE = ("black", 1)
_QUERY = ("red", 3)


def parse_query(query: str, phone_ids: Mapping[str, int], N: int) -> dict[int, int]:
    """MakeEvent: ``pdf-class/phone1/.../phoneN`` -> event {-1: pdf-class, 0: phone1, ...}."""
    parts = query.split("/")
    event: dict[int, int] = {}
    for i, part in enumerate(parts):
        key = PDF_CLASS_KEY + i
        if key == PDF_CLASS_KEY:
            try:
                value = int(part)
            except ValueError:
                value = -1
            if value < 0:
                raise FormatError(f"Bad query: invalid pdf-class ({part})")
        else:
            if part not in phone_ids:
                raise FormatError(f"Bad query: invalid symbol ({part})")
            value = int(phone_ids[part])
        event[key] = value
    if len(event) != N + 1:
        raise FormatError(f'Invalid query size "{len(event)}"! Expected "{N + 1}"')
    return event


class _Renderer:
    def __init__(self, N: int, P: int, phones: Mapping[int, str], tooltips: bool):
        self.N, self.P, self.phones, self.tooltips = N, P, phones, tooltips
        self.next_id = 0
        self.out: list[str] = []

    def phone(self, p: int, what: str) -> str:
        name = self.phones.get(int(p))
        if not name:
            raise FormatError(f"{what}: {p}")
        return name

    def non_leaf(self, node_id: int, key: int, in_query: bool) -> None:
        color, width = _QUERY if in_query else _EDGE
        N, P = self.N, self.P
        label = ""
        if key == PDF_CLASS_KEY:
            label = '"PdfClass = ?"'
        elif key == 0:
            if N == 1 and P == 0:
                label = '"Phone = ?"'
            elif N == 3 and P == 1:
                label = '"LContext = ?"'
        elif key == 2 and N == 3 and P == 1:
            label = '"RContext = ?"'
        elif 0 <= key <= N - 1:
            label = '"Center = ?"' if P == key else f'"Ctx Position {key} = ?"'
        else:
            raise FormatError(f"Invalid decision tree key: {key}")
        self.out.append(f"{node_id}[label={label}, color={color}, penwidth={width}];\n")

    def subtree(self, em, query: Optional[dict], node_id: int) -> None:
        if em is None:
            return
        if isinstance(em, ConstantEventMap):
            color, width = _QUERY if query is not None else _EDGE
            self.out.append(f"{node_id}[shape=doublecircle, label={em.answer},color={color}, "
                            f"penwidth={width}];\n")
        elif isinstance(em, TableEventMap):
            self.table(em, query, node_id)
        elif isinstance(em, SplitEventMap):
            self.split(em, query, node_id)

    def table(self, em: TableEventMap, query: Optional[dict], node_id: int) -> None:
        value = query.get(em.key, -3000000) if query is not None else -3000000
        self.non_leaf(node_id, em.key, query is not None)
        for t, child in enumerate(em.table):
            color, width = _QUERY if t == value else _EDGE
            if em.key == PDF_CLASS_KEY:
                label = str(t)
            elif 0 <= em.key < self.N:
                if t == 0:
                    continue
                label = self.phone(t, "Phone ID found in a TableEventMap, but not in the phone "
                                      "symbol table! ID")
            else:
                raise FormatError(f"TableEventMap: Invalid event key: {em.key}")
            child_id = self.next_id
            self.next_id += 1
            self.out.append(f"\t{node_id} -> {child_id} [label={label}, color={color}, "
                            f"penwidth={width}];\n")
            self.subtree(child, query if t == value else None, child_id)

    def split(self, em: SplitEventMap, query: Optional[dict], node_id: int) -> None:
        value = query.get(em.key, -30000000) if query is not None else -30000000
        q_yes = query if value in em.yes_set else None
        q_no = query if q_yes is None else None
        cy, wy = _QUERY if q_yes is not None else _EDGE
        cn, wn = _QUERY if (query is not None and q_yes is None) else _EDGE
        self.non_leaf(node_id, em.key, query is not None)
        if em.key == PDF_CLASS_KEY:
            yes_label = ", ".join(str(v) for v in em.yes_set)
        else:
            yes_label = ", ".join(self.phone(v, "No phone found for Phone ID")
                                  for v in em.yes_set)
        yes_id = self.next_id
        self.next_id += 1
        if self.tooltips:
            self.out.append(f'\t{node_id} -> {yes_id} [tooltip="{yes_label}", label=YES, '
                            f"penwidth={wy}, color={cy}];\n")
        else:
            self.out.append(f'\t{node_id} -> {yes_id} [label="{yes_label}", penwidth={wy}, '
                            f"penwidth={wy}, color={cy}];\n")
        self.subtree(em.yes, q_yes, yes_id)
        no_id = self.next_id
        self.next_id += 1
        self.out.append(f"\t{node_id} -> {no_id}[label=NO, color={cn}, penwidth={wn}];\n")
        self.subtree(em.no, q_no, no_id)


def render_tree(tree: ContextDependency, phones: Mapping[int, str],
                query: Optional[dict] = None, use_tooltips: bool = False) -> str:
    """TreeRenderer::Render: the whole ``digraph EventMap { ... }`` text."""
    r = _Renderer(tree.N, tree.P, phones, use_tooltips)
    r.out.append("digraph EventMap {\n")
    root = r.next_id
    r.next_id += 1
    r.subtree(tree.to_pdf, query, root)
    r.out.append("}\n")
    return "".join(r.out)
