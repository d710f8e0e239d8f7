"""Empirical privacy auditing: estimate trade-off curves and epsilon lower bounds from samples."""

from privest.audit.auditor import AuditResult, audit, clopper_pearson_upper

__all__ = ["AuditResult", "audit", "clopper_pearson_upper"]
