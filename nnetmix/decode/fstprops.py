"""The OpenFst property bits a lattice's header carries when Kaldi writes it.

An OpenFst VectorFst does not compute its properties when written: its header holds the bits
the FST *knows*, kept up to date by every mutation (AddState, SetStart, AddArc, SetFinal, setting
an arc through a mutable arc iterator), each of which keeps some bits and clears or sets others
(fst/properties.h). Kaldi's lattice writers (latgen-faster-mapped, lattice-scale,
lattice-add-penalty, ...) build the lattice state by state and then rewrite every arc weight and
final weight in place (ScaleLattice, a penalty) before writing it. Rewriting an arc keeps only
what one arc can tell: acceptor or not, epsilons or not (input, output, both), weighted or not;
everything else (sortedness, determinism, cycles, accessibility) becomes unknown. So the header
of such a lattice holds exactly those four facts, computed over the whole lattice, plus kExpanded
and kMutable: for a typical compact lattice (an acceptor without epsilon arcs, with weights) that
is 0x10a810003. A lattice with states but no arcs is left as built (the many bits an FST without
arcs knows); one with no states has the properties of an empty FST.

Only these facts go into a header; a reader that needs more (OpenFst's fstinfo) computes them.
"""
from __future__ import annotations

__all__ = ["lattice_properties", "EMPTY_PROPERTIES"]

# bit values of fst/properties.h
EXPANDED, MUTABLE = 0x1, 0x2
ACCEPTOR, NOT_ACCEPTOR = 0x10000, 0x20000
I_DETERMINISTIC, O_DETERMINISTIC = 0x40000, 0x100000
EPSILONS, NO_EPSILONS = 0x400000, 0x800000
I_EPSILONS, NO_I_EPSILONS = 0x1000000, 0x2000000
O_EPSILONS, NO_O_EPSILONS = 0x4000000, 0x8000000
I_LABEL_SORTED, O_LABEL_SORTED = 0x10000000, 0x40000000
WEIGHTED, UNWEIGHTED = 0x100000000, 0x200000000
ACYCLIC, INITIAL_ACYCLIC = 0x800000000, 0x2000000000
TOP_SORTED = 0x4000000000
ACCESSIBLE, CO_ACCESSIBLE = 0x10000000000, 0x40000000000
STRING, UNWEIGHTED_CYCLES = 0x100000000000, 0x800000000000

_STATIC = EXPANDED | MUTABLE  # a VectorFst always has these
# what an FST with states but no arcs knows after AddState (which forgets accessibility and
# string-ness), SetStart and SetFinal: no arc has broken any of these
_NO_ARCS = (_STATIC | ACCEPTOR | I_DETERMINISTIC | O_DETERMINISTIC | NO_EPSILONS | NO_I_EPSILONS
            | NO_O_EPSILONS | I_LABEL_SORTED | O_LABEL_SORTED | ACYCLIC | INITIAL_ACYCLIC
            | TOP_SORTED | UNWEIGHTED_CYCLES)
#: an FST without states (OpenFst's kNullProperties and the static bits)
EMPTY_PROPERTIES = _NO_ARCS | UNWEIGHTED | ACCESSIBLE | CO_ACCESSIBLE | STRING


def lattice_properties(num_states: int, num_arcs: int, acceptor: bool, input_epsilons: bool,
                       output_epsilons: bool, epsilons: bool, weighted: bool) -> int:
    """Header properties of a lattice built and then rewritten weight by weight (see above).

    ``acceptor``: every arc's input label equals its output label; ``input_epsilons`` /
    ``output_epsilons`` / ``epsilons``: some arc has input label 0 / output label 0 / both;
    ``weighted``: some arc or final weight is neither One nor Zero.
    """
    if num_states == 0:
        return EMPTY_PROPERTIES
    w = WEIGHTED if weighted else UNWEIGHTED
    if num_arcs == 0:
        return _NO_ARCS | w
    return (_STATIC | w | (ACCEPTOR if acceptor else NOT_ACCEPTOR)
            | (EPSILONS if epsilons else NO_EPSILONS)
            | (I_EPSILONS if input_epsilons else NO_I_EPSILONS)
            | (O_EPSILONS if output_epsilons else NO_O_EPSILONS))
