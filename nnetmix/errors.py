"""Named exceptions: a user mistake becomes one ERROR line in a bin/ tool, never a traceback."""

__all__ = ["NnetmixError", "UsageError", "FormatError", "DataDirError", "JobError", "WriteError"]


class NnetmixError(Exception):
    """Base of every error nnetmix raises on bad input; bin/ tools print it as one line."""


class UsageError(NnetmixError):
    """Wrong options or argument count on a command line."""


class FormatError(NnetmixError):
    """A file is not in the Kaldi format it should be in (truncated ark, bad token, ...)."""


class DataDirError(NnetmixError):
    """A Kaldi data directory breaks one of its invariants (sorting, coverage, agreement)."""


class JobError(NnetmixError):
    """A job run through a job wrapper failed."""


class WriteError(NnetmixError):
    """An output could not be written (a full disk, a file-size limit, a missing directory)."""
