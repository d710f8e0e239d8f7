"""Empirical privacy auditing (used by the tests, offered to users)."""

from privest.audit.auditor import AuditResult, audit, clopper_pearson_upper
from privest.audit.composition import audit_composition
from privest.audit.zil import audit_zil_mechanism, zil_neighbours

__all__ = [
    "AuditResult",
    "audit",
    "audit_composition",
    "audit_zil_mechanism",
    "clopper_pearson_upper",
    "zil_neighbours",
]
