"""Membership inference on mechanism releases: does a release tell whether a record was in the data?

The attacks, one module each (each a class with ``fit``/``infer``, :class:`dpaudit.attacks.attack.Attack`):

* :mod:`.shokri` — shadow models through ART (Shokri et al., S&P 2017);
* :mod:`.yeom` — the loss/confidence threshold attack and its advantage (Yeom et al., CSF 2018);
* :mod:`.label_only` — label-only attacks (Choquette-Choo et al., ICML 2021; Li & Zhang, CCS 2021);
* :mod:`.lira` and :mod:`.rmia` — per-record likelihood-ratio attacks (Carlini et al., S&P 2022;
  Zarifzadeh et al., ICML 2024), on :mod:`.reference_runs` of the mechanism and
  :mod:`.record_scores`; :mod:`.per_record` is what they share;
* :mod:`.tracing` — tracing a record through a vector release.

What they share: the attacker's knowledge and shadow targets (:mod:`.shadow`), ROC and metrics
(:mod:`.roc`, :mod:`.metrics`, the ε lower bound a TPR/FPR certifies), the records most exposed
(:mod:`.exposure`), abstention (:mod:`.abstain`) and vector releases (:mod:`.vector_map`).
"""
