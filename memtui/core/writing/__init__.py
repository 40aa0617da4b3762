"""The one write path: every write becomes a Proposal, the guard and the policies decide it, planning gives its next
text, and the journal writes, commits and audits it. `Memory` is its front."""
