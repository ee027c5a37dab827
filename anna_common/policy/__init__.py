"""Administrator and user policy: the model, parsing, glob matching, the subject, decisions."""
