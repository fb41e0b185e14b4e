"""Who may start a run: only users with write access to the repository. The issue text is
untrusted, and so is `author_association` (it says how someone relates to the repository,
not what they may do): the decision rests on what the collaborator-permission endpoint
reported for the person who caused the event (the labeler, the commenter)."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.github.forge import Permission

# Roles that include push access. `permission` is GitHub's legacy level, where maintain
# reads as write and triage as read; custom roles keep their base level there.
ALLOWED_PERMISSIONS = frozenset({"admin", "write"})
ALLOWED_ROLES = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str


def may_trigger(permission: Permission) -> Decision:
    role = permission.role_name or permission.permission
    if permission.permission in ALLOWED_PERMISSIONS or permission.role_name in ALLOWED_ROLES:
        return Decision(True, f"@{permission.login} has {role} access")
    return Decision(False, f"@{permission.login} has {role or 'no'} access; selfcorrect runs "
                    "only for users with write, maintain or admin access")
