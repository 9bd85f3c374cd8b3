"""The `triggers` policy's Chinese rules: the shapes of a sentence that states a fact, preference, plan or relation,
or asks to be remembered (我喜欢, 我不吃, 我对…过敏, 我住在, 下周三要…, 记住), and of chit-chat."""

from __future__ import annotations

import re

_ZH_REMEMBER = re.compile(r"记住|记一下|记下来|帮我记|提醒我|记得|别忘了|不要忘|别忘记|请注意|以后都|从现在起|务必")
_ZH_PREFER = re.compile(r"我(?:们)?(?:很|非常|最|特别|也|还|比较|一直|从来|真的|超|挺|都)*(?:不太|不|没|从不|不怎么)?"
                        r"(?:不能|不可以|不敢|没法)?(?:喜欢|爱吃|爱喝|爱看|爱玩|爱|讨厌|偏爱|偏好|受不了|怕|吃|喝|抽烟|习惯|擅长)")
_ZH_ALLERGY = re.compile(r"我(?:们)?.{0,3}对.{1,12}过敏|过敏")
_ZH_FACT = re.compile(r"我(?:们)?(?:现在|目前|一直|已经|今年|从小)?(?:住在|住|在.{1,12}(?:工作|上班|上学|读书|念书|住)|"
                      r"是(?!说|不是|吗)|叫|姓|来自|出生|生于|毕业|工作|上班|养了|有(?:一|两|三|四|五|个|只|条|位|\d)|"
                      r"今年\d+|属|学|搬到|搬去|当)")
_ZH_POSSESSIVE = re.compile(r"我(?:们)?的?[^，,。是的]{1,12}?(?:是|叫|在|有|住|姓|过敏|喜欢)")
_ZH_HABIT = re.compile(r"我(?:们)?[^，,。我你]{0,4}?(?:每天|每周|每个?月|每年|每次|经常|常常|一般|通常|总是|平时|平常|周末都)|"
                       r"我(?:们)?(?:最近|现在|目前|一直|正)?在")  # habits, and what one is doing for a while or where
_ZH_FEELING = re.compile(r"^我(?:今天|现在)?(?:有点|有些|好|太|很|真|超|特别|快)?(?:饿|累|困|渴|无聊|烦|忙|开心|高兴|难过|"
                         r"伤心|激动|紧张)(?:了|死了|啊|呀)?[。！!~～…]*$")
_ZH_RELATION = re.compile(r"我(?:们)?(?:的)?(?:女儿|儿子|老婆|老公|妻子|丈夫|太太|先生|爱人|妈妈|母亲|爸爸|父亲|爸妈|父母|"
                          r"妈|爸|男朋友|女朋友|对象|未婚[夫妻]|哥哥|姐姐|弟弟|妹妹|孩子|宝宝|爷爷|奶奶|外公|外婆|姥姥|姥爷|"
                          r"朋友|同事|老板|领导|同学|室友|猫|狗|家人|家里|邻居|老师|教练|学生|队友|搭档|合伙人|舅舅|叔叔|阿姨|"
                          r"姑姑|表哥|表姐|表弟|表妹|堂哥|堂姐|闺蜜|兄弟|师父|徒弟|房东|导师|团队|乐队)")
# someone else's doings: he, she, they, or a 老王 / 小李, with a verb of their own (她上周生了个女儿, 老王养鸽子)
_ZH_OTHERS = re.compile(r"(?:^|[，,])(?:他们|她们|他|她|[老小][\u4e00-\u9fff](?![\u4e00-\u9fff]*[吗呢]))"
                        r"(?:[^，,。！？说觉看好真太]{0,6}?)(?:了|过|养|在[^，,。]{1,10}(?:工作|上班|上学|住|读书)|每天|每周|经常|"
                        r"喜欢|爱吃|讨厌|住在|搬到|开了|有(?:一|两|三|个|只|\d))")
# showing one's own things: 这是我的奖杯, 给你看看我画的画
_ZH_SHOWN = re.compile(r"(?:这是|这就是|那是|这些是|这张是|给你看看?|看看|瞧瞧)我(?:们)?")
# pep talk: 坚持下去, 不会放弃, 渡过难关, 加油; a sentence with little else is encouragement, not a fact
_ZH_PEP = re.compile(r"坚持(?:下去|住|到底)?|加油|放弃|努力|渡过难关|挺过去|熬过去|梦想|让你失望|支持你|陪着你|相信自己|"
                     r"会好起来|没问题|你可以的|一定可以|一定行")
_ZH_PEP_FILLER = re.compile(r"我们|我|你|会|一定|要|的|了|吧|啊|呀|都|也|一起|继续|还是|绝对|绝|决|不|别|永远|再|一直|"
                            r"[\s，,。！？!?~～…]")
_ZH_PLAN = re.compile(r"(?:明天|后天|今晚|今天晚上|下周.?|下星期.?|下个?月|明年|周末|这周.?|本周.?|星期[一二三四五六日天]|"
                      r"周[一二三四五六日]|\d+月\d+[日号]|\d+[日号]|\d+点)|我(?:们)?(?:要|打算|准备|计划|决定|想要|将|会|得)")
_ZH_PAST = re.compile(r"我(?:们)?(?:昨天|前天|上周.?|上个?月|去年|刚|刚刚|已经|最近|终于)?.{0,8}?(?:了|过)")
_ZH_CHAT = re.compile(r"^(?:哈+|呵+|嘿+|嗯+|哦+|噢+|啊+|好的?|好吧|行|可以|谢谢.*|多谢.*|你好.*|早上好|晚安|再见|拜拜|"
                      r"没问题|不客气|对|是的|真的吗|太好了|好棒|厉害|加油|哇+|OK|ok|lol)[。！？!?~～…,，.\s]*$")
_ZH_QUESTION = re.compile(r"[吗呢么嘛]\s*[？?]?$|[？?]$|^(?:你|您).{0,10}(?:吗|呢|么)")
_ZH_REACTION = re.compile(r"^我(?:也)?(?:觉得|认为|想想|猜|知道|明白|理解|同意|希望|相信|看看|真替你|为你|好开心|很开心|太开心|"
                          r"好高兴|很高兴|好羡慕|很羡慕|好感动|懂了|懂你)")
_ZH_YOU = re.compile(r"你(?:的)?.{0,8}?(?:是|喜欢|爱|讨厌|住在|在.{1,8}工作|过敏|不吃|说过|提过|要)")
_ZH_COMMIT = re.compile(r"我(?:会|一定会|保证|答应|记下|记住了|帮你|替你|提醒你)")


def _core(s: str) -> str:
    clauses = re.split(r"(?<=[，,])", s.strip())
    while clauses and _ZH_CHAT.match(clauses[0].rstrip("，,")):
        clauses.pop(0)  # 嗯嗯， 哈哈， 好的， before what is said
    return "".join(clauses)


def judge_zh(s: str, assistant: bool) -> tuple[str, int] | None:
    core = _core(s)
    if not core:
        return None
    asks = _ZH_REMEMBER.search(core) is not None
    if assistant:
        if _ZH_QUESTION.search(core):
            return None
        if _ZH_YOU.search(core):
            return "fact", 3
        if _ZH_COMMIT.search(core):
            return "decision", 3
        return None
    if _ZH_PEP.search(core) and len(_ZH_PEP_FILLER.sub("", _ZH_PEP.sub("", core))) < 3:
        return None  # 我一定会坚持下去！ 我们会一起渡过难关的。
    if asks:
        return ("instruction" if re.search(r"以后|从现在起|每次|总是|不要|别", core) and not _zh_kind(core)
                else _zh_kind(core) or "fact"), 4
    if _ZH_QUESTION.search(core) and not re.search(r"[，,]", core):
        return None  # a question with no clause stating something
    if _ZH_FEELING.match(core):
        return None  # a passing state, not a fact
    if _ZH_REACTION.match(core):
        rest = re.split(r"[，,]", core, maxsplit=1)
        return _zh_typed(rest[1]) if len(rest) > 1 else None
    return _zh_typed(core)


def chatter_zh(s: str) -> bool:
    """Nothing a later question could ask about: a question, 嗯嗯 / 谢谢 / 哈哈, pep talk."""
    core = _core(s)
    return not core or bool(_ZH_CHAT.match(core) or _ZH_QUESTION.search(core) or _ZH_FEELING.match(core)
                or re.match(r"^(?:太|好|真|超|挺)[\u4e00-\u9fff]{1,4}(?:了|啊|呀|吧)?[！!。~～…]*$", core)
                or _ZH_PEP.search(core) and len(_ZH_PEP_FILLER.sub("", _ZH_PEP.sub("", core))) < 3)


def _zh_typed(core: str) -> tuple[str, int] | None:
    kind = _zh_kind(core)
    return None if kind is None else (kind, 3 if kind != "episodic" else 2)


def _zh_kind(s: str) -> str | None:
    if _ZH_PREFER.search(s) or _ZH_ALLERGY.search(s):
        return "preference"
    if _ZH_HABIT.search(s):
        return "fact"  # before the plans: 我周末一般去爬山 is a habit, not a plan
    if _ZH_PLAN.search(s) and re.search(r"我|要|去|会|打算|准备", s):
        return "decision" if re.search(r"要|打算|准备|计划|决定|将|会", s) else "episodic"
    if _ZH_RELATION.search(s):
        return "entity"
    if _ZH_POSSESSIVE.search(s) or _ZH_FACT.search(s) or _ZH_OTHERS.search(s) or _ZH_SHOWN.search(s):
        return "fact"
    if _ZH_PAST.search(s):
        return "episodic"
    return None
