"""Chinese memories in pairs that share a topic or words, for the ranking stage's tests."""

PAIRS = {"user/pets.md": "---\ntype: fact\n---\n# Facts\n\n"
         "- 2026-10-01: 我养的鹦鹉叫小蓝，会说你好。\n"
         "- 2026-10-01: 我家猫咪叫年糕，是只布偶猫。\n"
         "- 2026-10-01: 我晕车，坐长途大巴必须吃药。\n"
         "- 2026-10-01: 我开车上下班，单程大概半小时。\n"
         "- 2026-10-01: 我姥姥今年九十岁了，身体还很硬朗。\n"
         "- 2026-10-01: 我奶奶去年搬去了养老院。\n"}
