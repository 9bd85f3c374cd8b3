"""The people and pets a question asks about: relation words of both languages and the names a store gives them."""

from __future__ import annotations

import re

# role -> the words naming it, English then Chinese; general vocabulary of both languages, not any store's words.
# A word standing for several roles (parents, 爸妈, kids) is in each.
_ROLES = {
    "wife": ("wife|spouse|partner", "妻子|太太|老婆|媳妇|爱人"),
    "husband": ("husband|spouse|partner", "丈夫|老公|爱人"),
    "son": ("sons?|kids?|child(?:ren)?", "儿子|孩子|小孩"),
    "daughter": ("daughters?|kids?|child(?:ren)?", "女儿|孩子|小孩"),
    "father": ("father|dad|parents", "父亲|爸|父母"),
    "mother": ("mother|mom|mum|parents", "母亲|妈|父母"),
    "brother": ("brothers?|siblings?", "哥哥|弟弟|兄弟|我哥|我弟"),
    "sister": ("sisters?|siblings?", "姐姐|妹妹|姐妹|我姐|我妹"),
    "cousin": ("cousins?", "表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹"),
    "grandfather": ("grandfather|grandpa|grandparents", "爷爷|外公|姥爷|祖父"),
    "grandmother": ("grandmother|grandma|grandparents", "奶奶|外婆|姥姥|祖母"),
    "father_in_law": (r"father-in-law|(?:wife|husband)'s\s+(?:father|dad)|in-laws", "岳父|公公|老丈人"),
    "mother_in_law": (r"mother-in-law|(?:wife|husband)'s\s+(?:mother|mom|mum)|in-laws", "岳母|婆婆|丈母娘"),
    "boss": ("boss|manager|supervisor|team lead", "上司|老板|领导|经理|主管"),
    "colleague": ("colleagues?|co-?workers?|teammates?|people I work with", "同事|队友"),
    "friend": ("friends?|roommates?|flatmates?|classmates?", "朋友|好友|室友|同学"),
    "neighbour": ("neighbou?rs?", "邻居"),
    "pet": ("pets?|dogs?|cats?|puppy|kitten", "宠物|(?<!热)狗|(?<!熊)猫|犬"),
}
# the roles a question about the people at work reaches: a colleague question asks about the boss too
_REACH = {"colleague": {"colleague", "boss"}}
_WORD = {role: re.compile(rf"\b(?:{en})\b|{zh}", re.I) for role, (en, zh) in _ROLES.items()}
# in a memory an English relative is the asker's when "my"/"our" says so ("My older brother Tom"): "a kids' reading
# hour" or "Caroline's mother" is no one of theirs. Chinese memories drop 我 (孩子的视频), so Chinese words count alone.
_FAMILY = ("wife", "husband", "son", "daughter", "father", "mother", "brother", "sister", "cousin", "grandfather",
           "grandmother")
_MEMORY_WORD = {role: re.compile(rf"\b(?:my|our)\s+(?:[a-z]+\s+)?(?:{en})\b|{zh}", re.I) if role in _FAMILY
                else _WORD[role] for role, (en, zh) in _ROLES.items()}
_EN_ANY = "|".join(en for en, _ in _ROLES.values())
_ZH_ANY = "|".join(sorted({w for _, zh in _ROLES.values() for w in zh.split("|")}, key=len, reverse=True))
# a Chinese question naming a relation without an owner ("孩子吃哪种水果会过敏？") asks about the asker's: one about
# someone else names them (他/她, 小王的孩子)
_OTHERS_ZH = re.compile(rf"[他她]|[\u4e00-\u9fff]的(?:{_ZH_ANY})")
# a name given next to a role word: "My manager, Priya Nair", "my cousin Jason", "Aroha, the new teammate",
# 我太太苏晴, 一只柴犬，叫可乐
_NAME_EN = re.compile(rf"\b(?:{_EN_ANY})\b,?\s+(?:(?:named|called)\s+)?([A-Z][a-z]+)")
_NAME_BEFORE = re.compile(rf"\b([A-Z][a-z]+),?\s+(?:the|our|my)\s+(?:new\s+|old\s+)?(?:{_EN_ANY})\b", re.I)
_NAMED_EN = re.compile(r"\b(?:named|called)\s+([A-Z][a-z]+)")
_NAME_ZH = re.compile(rf"(?:{_ZH_ANY})[，,]?(名字叫|名叫|叫)?([\u4e00-\u9fff]{{2}})")
# a Chinese name is told from the verb or time word after a role word (我妈退休前, 我儿子今年) by its shape: a
# common surname, a nickname's 老/小/阿, a doubled character (乐乐), or a word saying it is a name (叫)
_SURNAMES = set("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
                "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔汤")
_NOT_NAME_EN = {"is", "was", "has", "had", "and", "the", "who", "works", "lives", "likes", "loves", "runs", "plays",
                "teaches", "goes", "said", "from", "at", "in", "of", "on", "to", "my", "our", "a", "an"}


# a question about how the assistant should answer ("How do I like you to answer me?", 你回答我时要注意什么？) asks for
# every instruction the asker gave it; an instruction addresses the assistant or tells it what (not) to do
_TO_ASSISTANT = re.compile(r"(?=.*\b(?:you|your)\b)(?=.*\b(?:answer|reply|respond|write|talk|explain)\w*)|"
                           r"(?=.*[你您])(?=.*(?:回答|回复|答复|说话|聊天|解释))", re.I | re.S)
_INSTRUCTION = re.compile(r"^(?:\d{4}-\d\d-\d\d:\s*)?(?:keep|use|give|write|answer|reply|respond|explain|show|start|"
                          r"list|cite|call|avoid|never|always|please|don't|do not|be)\b|\b(?:you|your)\b|"
                          r"不要|请(?!假|客)|务必|(?:^|[，,：:])别|回答|回复|答复", re.I)


def asks_instructions(text: str) -> bool:
    """Whether a question asks how the assistant should answer (it gathers every instruction)."""
    return bool(_TO_ASSISTANT.search(text))


def asked(text: str) -> set[str]:
    """The roles a question names by a relation word ("my boss", 我老婆, "my wife's father"), and "assistant" for
    a question about how the assistant should answer."""
    found = {role for role, word in _WORD.items() if word.search(text)}
    if asks_instructions(text):
        found.add("assistant")
    if found & {"father_in_law", "mother_in_law"}:  # "my wife's father" is the father-in-law, not the father
        inlaw = re.search(r"(?:wife|husband)'s\s+(?:father|dad|mother|mom|mum)", text, re.I)
        if inlaw:
            found -= {"wife", "husband", "father", "mother"}
    return set().union(*(_REACH.get(r, {r}) for r in found)) if found else set()


def asked_of_asker(text: str, about_asker: bool) -> set[str]:
    """The roles of the asker's people a question names: a question about its asker, or a Chinese one naming a
    relation without an owner; English questions without "my"/"our" are about someone else's ("her brother")."""
    if about_asker:
        return asked(text)
    han = re.search("[\u4e00-\u9fff]", text) is not None
    return asked(text) if han and not _OTHERS_ZH.search(text) else set()


def roles_of(text: str) -> set[str]:
    """The roles a memory names by a relation word ("assistant": an instruction to the assistant)."""
    found = {role for role, word in _MEMORY_WORD.items() if word.search(text)}
    body = re.sub(r"^\s*[-*]\s+", "", text.strip())
    return found | {"assistant"} if _INSTRUCTION.search(body) else found


def names(texts, roles: set[str]) -> set[str]:
    """The names the memories give to someone of these roles ("我儿子乐乐" -> 乐乐, "My cousin Jason" -> Jason)."""
    out = set()
    for text in texts:
        if not roles_of(text) & roles:
            continue
        found = [m.group(1) for r in (_NAME_EN, _NAME_BEFORE, _NAMED_EN) for m in r.finditer(text)]
        out.update(n for n in found if n[0].isupper() and n.lower() not in _NOT_NAME_EN)
        for m in _NAME_ZH.finditer(text):
            name = m.group(2)
            if m.group(1) or name[0] in _SURNAMES or name[0] in "老小阿" or name[0] == name[1]:
                out.add(name)
    return out


def names_any(text: str, roles: set[str], known: set[str]) -> bool:
    """Whether a memory names someone of these roles, by a relation word or by one of their names."""
    return bool(roles_of(text) & roles) or any(n in text for n in known)


def words(roles: set[str]) -> str:
    """The plain words of these roles, both languages: what a question is widened with to reach every memory
    introducing one of them ("my son" finds 我儿子乐乐)."""
    out = []
    for role in sorted(roles - {"assistant"}):
        en, zh = _ROLES[role]
        out += [w for w in re.sub(r"s\?|\(\?:[^)]*\)\??|\\s\+|'s", " ", en).replace("|", " ").split() if w.isalpha()]
        out += [re.sub(r"\(\?<![^)]*\)", "", w) for w in zh.split("|")]  # 狗, not the pattern (?<!热)狗
    return " ".join(dict.fromkeys(out))
