"""Privacy accounting: PLDs of the sampled laws, zCDP, and accountants (see docs/accounting.md)."""
