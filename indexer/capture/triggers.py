"""The `triggers` policy: the sentences of a turn that state a durable fact, preference, plan or relation, or ask
to be remembered, found by their shape (no LLM); chit-chat is dropped."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from indexer.capture.triggers_zh import chatter_zh, judge_zh
from indexer.notes.textseg import has_han, is_stopword


@dataclass(frozen=True)
class Item:
    """One memory a capture policy took out of a turn: its text, memory type, importance and who said it."""

    text: str
    type: str = "fact"
    importance: int | None = None
    speaker: str = ""


# sentence ends of both languages; an English end needs a space (or the end) after it, so 3.5 and e.g. stay whole
_SENTENCE = re.compile(r"(?<=[。！？；!?;…])|(?<=[.])(?=\s)|\n+")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "＇": "'"})
_ASSISTANT_ROLES = ("assistant", "system", "tool", "model", "character", "bot")

# --- English: first person, then what the verb after it says ------------------------------------------------
_ME = r"(?:i|we)"
_ADV = r"(?:(?:really|also|still|just|recently|finally|actually|usually|always|never|often|sometimes|totally|" \
       r"absolutely|definitely|already|now|currently|only|even|so|too|kind of|sort of|mostly|all|both|typically|" \
       r"usually|normally|generally|regularly|rarely|each|once|first|truly|very|super|pretty|quite|incredibly|" \
       r"extremely|deeply)\s+)*"
_NEG = r"(?:don't|do not|didn't|did not|never|can't|cannot|can not|won't|will not|am not|'m not|no longer|" \
       r"wouldn't|shouldn't|haven't|hasn't)\s+"
# discourse verbs: a first person with one of these reports a reaction, not a fact about the speaker
_REACTION = r"(?:think|thought|guess|know(?=\s*(?:[,.!?]|$|what|how|why|that|where|who|right|it\b|you\b|the feeling))|knew|mean|meant|hope|hoped|bet|agree|see(?=\s*(?:[,.!?]|$|what|how|why|that|where|your|it\b))|saw it|understand|feel|felt|" \
            r"wish|wonder|wondered|believe|suppose|appreciate|admire|imagine|totally|can't wait|cannot wait|" \
            r"get it|got it|get that|remember when|(?:love|like) (?:that|this)(?!\s+(?!so\b|too\b|you\b|idea\b|much\b|one\b)[a-z]{3,})|" \
            r"(?:love|like|enjoy) (?:it|them)\b|love your|love how|like your|like how|hate that|hate it|was wondering|wanted to ask|want to ask|" \
            r"have to say|must say|gotta say|can see|can tell|can imagine|would love|'d love|would like to know|" \
            r"just wanted|am sure|'m sure|am glad|'m glad|am happy for|'m happy for|am sorry|'m sorry|" \
            r"am so|'m so|am really|'m really|am excited for|'m excited for|am proud of you|'m proud of you|" \
            r"(?:am|'m) doing (?:well|great|good|fine|ok|okay|alright|better|amazing|awesome|pretty|so|really|much)|" \
            r"am feeling|'m feeling|am curious|'m curious|am impressed|'m impressed|" \
            r"am here|'m here|am all ears|'m all ears|am thrilled for|'m thrilled for)\b"
_PREFER = r"(?:like|likes|love|loves|enjoy|enjoys|prefer|prefers|hate|hates|dislike|dislikes|adore|can't stand|" \
          r"recommend|recommended|" \
          r"eat|drink|smoke|am into|'m into|am a (?:big |huge )?fan of|'m a (?:big |huge )?fan of|" \
          r"am allergic|'m allergic|am vegetarian|'m vegetarian|am vegan|'m vegan)\b"
_STATE = r"(?:am|'m|are|'re|was|were)\s+(?:(?:a|an|the|from|at|based|originally|married|single|divorced|" \
         r"engaged|pregnant|retired|allergic|vegetarian|vegan|learning|working|studying|planning|going|moving|" \
         r"training|volunteering|saving|taking|writing|building|starting|trying|thinking of|thinking about|" \
         r"looking for|looking into|preparing|getting|leaving|visiting|hosting|organizing|applying|raising|" \
         r"born|raised|part of|after|keen|off to|up for|set on|eager|in(?!\s+(?:awe|for|to|this|it|on)\b)|\d)\b|" \
         r"\w+ing\b)"
_HAVE = r"(?:have|has|had|'ve got|own|owned|'ve|'ve been|have been|had been)\s+(?:a|an|two|three|four|five|" \
        r"\d+|my|our|some|been|got|never|always|just|already|lived|worked|started|finished|made|done|" \
        r"taken|seen|read|visited|joined|adopted|decided|learned|[a-z]+ed)\b"
_PLACE = r"(?:live|lives|lived|work|works|worked|study|studies|studied|grew up|was born|moved|teach|teaches|" \
         r"taught|volunteer|volunteered|graduated|retired|run|ran|play|played|train|trained|own|owns)\b"
_PLAN = r"(?:will|'ll|shall|am going to|'m going to|are going to|'re going to|am gonna|'m gonna|plan to|" \
        r"planned to|plan on|am planning|'m planning|intend to|decided to|want to|wanna|would like to|'d like to|" \
        r"hope to|need to|have to|got to|am about to|'m about to|might|may|can't wait to)\b"
# a past event of the speaker's: a regular past (-ed) or one of the common irregular ones
_PAST = r"(?:(?!(?:n|f|sp|s|proc|exc|succ|ind|bl|br)eed\b)[a-z]+ed|went|got|made|took|ran|met|bought|began|" \
        r"found|gave|saw|wrote|read|won|lost|left|" \
        r"built|spent|sold|paid|kept|brought|taught|drew|flew|drove|swam|sang|held|heard|told|became|came|" \
        r"did|had|felt|sent|said|wore|chose|caught|fell|forgot|hit|put|set|shut|cut|quit|rode|shot|slept|" \
        r"spoke|stood|stole|struck|swore|threw|understood|woke|won|dug|fed|fought|grew|hung|knew|laid|led|lent|" \
        r"meant|rang|rose|sat|sought|shook|sank|sprang|stuck|stung|swept|tore|wept|wound)\b"
_VERB_AFTER_ME = re.compile(
    rf"\b{_ME}\s+{_ADV}(?P<neg>{_NEG})?{_ADV}(?P<what>{_REACTION}|{_PREFER}|{_STATE}|{_HAVE}|{_PLACE}|{_PLAN}|"
    rf"{_PAST})(?!')|\b(?P<contr>i'm|i've|i'll|i'd|we're|we've|we'll)\s+{_ADV}(?P<what2>\w+(?:\s+\w+)?)", re.I)
_ELIDED_ME = re.compile(rf"(?:^|\s[-\u2013\u2014]\s)(?:(?:well|so|yeah|yes|yep|yup|oh|and|also|just|recently|finally|actually)[,!]?\s+)*"
                        rf"(?:been\s+\w+ing|(?:{_PAST})\s+(?:a|an|the|my|some|\w+ing|to|into|back|\d))", re.I)
# habits and what one does with one's own things: "I typically hold it for a minute", "I visualize my goals"
_HABIT = re.compile(r"\b(?:once|twice|\w+ times)\s+a\s+(?:day|week|month|year)\b|\b(?:i|we)\b.*\bevery\s+(?:day|week|"
                    r"month|year|morning|evening|night|weekend|monday|tuesday|wednesday|thursday|friday|saturday|"
                    r"sunday)\b|\b(?:i|we)\s+(?:typically|usually|normally|generally|often|always|sometimes|regularly|"
                    r"rarely|never)\s+[a-z]+|\b(?:i|we)\s+(?!love|like|miss|mean|hope|wish)[a-z]{3,}\s+(?:my|our)\s+\w+",
                    re.I)
# a thing described, not judged: "It's a map of Middle-earth", "They're visuals of the characters"
_JUDGED = r"(?:great|good|nice|awesome|cool|amazing|wonderful|lovely|beautiful|fantastic|brilliant|fun|interesting|" \
          r"tough|hard|lot|bit|kind|sort|way|real|true|so|really|very|such|pretty|super|totally|definitely|just|too|all|" \
          r"been|like|gonna|going|getting|also|always)"
_DESCRIBED = re.compile(rf"^(?:it|this|that|these|those|they|he|she)\s*(?:'s|is|are|'re|was|were)\s+"
                        rf"(?!(?:(?:a|an|the|my|our|his|her|their|some)\s+)?{_JUDGED}\b)"
                        rf"(?:(?:a|an|the|my|our|his|her|their|some)\s+)?[\w-]+(?:\s+[\w-]+){{0,2}}\s+"
                        rf"(?:of|from|for|by|about|called|named|inspired|made|written|painted|in|at|with)\b", re.I)
_POSSESSIVE = re.compile(rf"\b(?:my|our)\s+(?:[\w'-]+\s+){{0,3}}?(?:is|are|was|were|'s|has|have|had|just|"
                         rf"loves?|likes?|hates?|works?|lives?|turned|named|called|{_PAST})\b(?!')"
                         r"|\b(?:my|our)\s+[\w'-]+(?:\s+[\w'-]+)?\s+(?:and i|and me)\b"
                         r"|\b(?:is|are|was|were|'s|'re)\s+(?:(?:\w+\s+)?(?:my|our)|\w+\s+\w+\s+my)\s+(?!pleasure\b)", re.I)
_RELATION = re.compile(r"\b(?:my|our)\s+(?:[\w-]+\s+)?(?:wife|husband|partner|spouse|daughter|son|kids?|children|child|"
                       r"mom|mother|dad|father|parents?|sister|brother|siblings?|grandma|grandpa|grandmother|"
                       r"grandfather|girlfriend|boyfriend|fianc[eé]e?|friend|best friend|boss|cousin|aunt|uncle|"
                       r"niece|nephew|dog|cat|pet|puppy|kitten|neighbou?r|roommate|flatmate|colleague|coworker|"
                       r"classmate|teammate|teacher|coach|mentor|students?)s?\b", re.I)
# someone else's doings: a name, or he, she, they, with a verb of their own (Tilly helps me focus, She had a
# tough time, My neighbour Bob keeps pigeons, They signed it); it, this and that are judged, not told about
_DID = rf"(?:(?:\w+ly|also|still|just|even|never|always|often)\s+)?(?!sounds|looks|seems|feels)" \
       rf"(?:{_PAST}|[a-z]{{2,}}(?<![su])s|has|have)(?!')"
_OTHERS = re.compile(rf"(?:(?:^|[,;:-]\s*|\b(?:and|but|so|because|when|since|then)\s+)(?:he|she|they)\s+{_DID}\s+"
                     rf"(?:a|an|the|my|his|her|their|our|your|me|him|them|us|it|some|this|that|up|out|back|home|at|in|"
                     rf"on|for|with|from|into|to|\d+|two|three|every|each|\w+ing)\b"
                     rf"|(?<=[a-z,]\s)(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s+{_DID}\s+\w)", re.I)
# a liking with the first person left out: "Love experimenting with spices" (not "Love seeing your work", "Enjoy!")
_ELIDED_LIKE = re.compile(r"^(?:(?:well|so|yeah|yes|and|also|just|still|really|totally)[,!]?\s+)*(?:love|loving|enjoying|"
                          r"adore)\s+\w+ing\b(?!\s+(?:your|you|how you|about you)\b)", re.I)
# showing one's own things: "Here's one of my trophies", "Check out my painting", "a pic of me and the team"
_SHOWN = re.compile(r"\b(?:here's|here is|here are|this is|these are|check out|check|take a look at|look at|meet)\s+"
                    r"(?:\w+\s+){0,3}?(?:my|our|me|us)\b|\b(?:pic|photo|picture|shot|snap|video|selfie)s?\s+"
                    r"(?:of|from)\s+(?:me|us|my|our|when|last|the day)\b", re.I)
# the first person left out of a plan or what one is busy with: "Gonna continue my studies", "Still working on it"
_ELIDED_PLAN = re.compile(r"^(?:(?:well|so|yeah|yes|and|also|just|still|now|currently|right now)[,!]?\s+)*"
                          r"(?:gonna|going to|planning (?:to|on|an?)|working on|trying to|hoping to|getting ready|"
                          r"looking (?:for|into)|searching for|saving (?:up )?for)\s+(?!be\b|it\b|that\b)\w+", re.I)
_THIRD = re.compile(r"\b[A-Z][a-z]+(?:'s)\s+[\w'-]+(?:\s+[\w'-]+)?\s+(?:is|are|was|were)\b")
_REMEMBER = re.compile(r"\b(?:remind me|remember that|remember to|remember:|please remember|don't forget|do not forget|"
                       r"never forget|note that|make a note|keep in mind|for the record|fyi|from now on)\b|"
                       r"^\s*(?:remember|note|(?:please\s+)?(?:always|never)(?!\s+(?:good|great|happy|glad|nice|here|there|"
                       r"fun|welcome|an?|so|the|been|\w+ing)\b))\b", re.I)
_IMPERATIVE = re.compile(r"^\s*(?:please\s+)?(?:always|never|don't|do not|call me|use|answer|reply|write|"
                         r"remind me|from now on)\b", re.I)
_TIME = re.compile(r"\b(?:tomorrow|tonight|yesterday)\b|\b(?:next|last|this)\s+(?:week|weekend|month|year|monday|"
                   r"tuesday|wednesday|thursday|friday|saturday|sunday|morning|evening|summer|winter|spring|fall|"
                   r"autumn|night|time)\b|\b(?:on|by|until|since|in)\s+(?:january|february|march|april|may|june|july|"
                   r"august|september|october|november|december|\d{4})\b|\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|"
                   r"\b\d{4}-\d{2}-\d{2}\b|\b(?:days?|weeks?|months?|years?) ago\b", re.I)
_QUESTION_HEAD = re.compile(r"^\s*(?:do|does|did|am|is|are|was|were|can|could|should|would|will|have|has|what|"
                            r"why|how|where|when|who|which|whose|any|anything|wanna|want|got|you)\b", re.I)
_YOU = re.compile(r"\b(?:you|you're|you've|you'll|you'd)\s+(?:\w+\s+){0,2}?(?:are|were|have|had|like|love|"
                  r"prefer|hate|live|work|said|mentioned|told|want|need|wanted|eat|drink|can't|don't|never|"
                  r"'re|'ve|allergic)\b|\byour\s+[\w'-]+(?:\s+[\w'-]+)?\s+(?:is|are|was|were|'s)\b", re.I)
_COMMIT = re.compile(r"\b(?:i'll|i will|i shall|i promise|i'm going to|i am going to|we'll|we will)\s+"
                     r"(?!be\b|see\b|think\b|have to\b|try\b|let you\b)\w+", re.I)
_EMPTY_PLAN = re.compile(r"\b(?:i'll|i will|i'm gonna|i'm going to|i'd|we'll|i have to|i'll have to|i might|i may|"
                         r"i could|i should|i wanna|i want to|i need to|i hope to)\s+" + _ADV +
                         r"(?:(?:\w+\s+){0,4}?(?:it|that|them|this|those|you|ya|your|one)\b|(?:reach out|get back|"
                         r"have (?:a blast|fun|a great time)|check (?:\w+ )?out)\b)", re.I)
_REACT_CONTRACTION = re.compile(rf"^(?:tired|hungry|thirsty|bored|sleepy|exhausted|lucky|good|fine|okay|ok|well|great|grateful|thankful|blessed|honou?red|" \
                                rf"touched|always here|heard|keep (?:going|pushing|at|it|working|trying|that|you|on|up|doing)|make sure|" \
                                rf"do (?:my|our) best|do it|do that|been (?:so|really|busy|thinking|feeling|good|great|well|ok|okay|pretty|super|" \
                                rf"loving|doing)|so|really|glad|happy|sure|sorry|excited|proud|curious|impressed|here|"
                                rf"doing (?:well|great|good|fine|ok|okay|alright|better|amazing|awesome|pretty|so|really|"
                                rf"much)|feeling|all|thrilled|thinking|loving|blown|not sure|always here|"
                                rf"totally|definitely|just|also|still|sending|rooting|going to have|gonna have|"
                                rf"{_REACTION})\b", re.I)
# pep talk: carrying on, not giving up, doing one's best, dreams and goals, being there for someone. A sentence
# that says nothing besides (I'll keep pushing, I won't let you down, Always here for you) is encouragement
_PEP = re.compile(r"\b(?:keep(?:s|ing)?(?:\s+on)?\s+(?:\w+ing\b|it up|at it|up|on|it)|"
                  r"stay(?:s|ing)?\s+(?:so\s+|really\s+)?(?:positive|optimistic|strong|motivated|focused|determined|"
                  r"hopeful|upbeat|calm|humble|true|safe|tuned|active)|push(?:ing)? on|(?:my|our) best effort|"
                  r"(?:try|trying|do|doing|give(?: it)?|giving(?: it)?)\s+(?:my|our|your)\s+(?:best|all)|"
                  r"give(?:s|n)?\s+up|giving up|quit(?:ting)?|stop(?:ping)?|let (?:you|anyone|them|myself|him|her) down|"
                  r"(?:reach|chase|follow|pursue|achieve|make|live|go for|going for|reaching|chasing|following|"
                  r"pursuing|achieving|making|living)\s+(?:my|our|your)\s+(?:own\s+)?(?:dreams?|goals?)|"
                  r"dreams? come true|believ\w*\s+in\s+(?:my|your|our)sel(?:f|ves)|hang(?:ing)? in there|"
                  r"(?:make|get|got|getting|push|pushing|making) (?:it )?through(?: (?:this|it|that))?|"
                  r"whatever comes(?: \w+ way)?|no matter what|make (?:you|them|him|her) proud|"
                  r"(?:right )?(?:by|on) (?:your|my) side|here (?:for|to) (?:you|help|listen|support|cheer)|"
                  r"cheer(?:ing)? (?:you|for you) on|root(?:ing)? for (?:you|us|me)|"
                  r"(?:we|you) (?:can|could|will) do (?:it|this)|(?:it|this) (?:will|'ll) (?:work out|pay off)|"
                  r"make (?:a |an )?(?:positive |real |big )?(?:difference|change|impact)|(?:help|inspire|lift) others(?: up)?)\b",
                  re.I)
# the conversation itself as a time: "since we last talked" says nothing about the speaker's life
_SINCE_CHAT = re.compile(r"\b(?:since|when|after|before)\s+(?:we|i|you)\s+(?:last\s+)?(?:talked|chatted|spoke|caught up|"
                         r"messaged|texted|met up)(?:\s+last)?\b", re.I)
# what holds for everyone, or a reaction, when the speaker is not in it: a maxim led by a gerund ("Taking care of
# ourselves is key"), "It's amazing how …", the universal we ("It adds something to our lives"), "Let's …",
# "Glad you …"
_GENERAL = re.compile(rf"^(?:(?:looks|sounds|seems) like\b|(?:that's|that is|this is|it's|it is)\s+(?:just\s+|exactly\s+)?(?:what|how|why)\b|\w+ing\b(?!\s+(?:to|for|on)\b)|let's\b|(?:so\s+|really\s+)?(?:glad|sorry|happy|congrats|"
                      rf"thanks|lucky|nice|cool|great|awesome|wow)\b|(?:it's|it is|that's|that is)\s+(?:\w+\s+)?"
                      rf"(?:{_JUDGED}|incredible|inspiring|crazy|funny|sad|important|key|vital|special|true)\s+"
                      rf"(?:how|that|when|what|to)\b)|\b(?:we all|all of us|each of us|each other|our (?:lives|hearts|"
                      rf"souls|loved ones|own|best|true selves|future|well-being))\b(?<!we all)", re.I)
_ME_SINGULAR = re.compile(r"\b(?:i|me|my|mine|myself)\b", re.I)
_VOCATIVE = re.compile(r"(?:^|,)\s*[A-Z][a-z]+(?=\s*(?:[!,.?]|$))")
_PEP_FILLER = frozenset(("gonna", "going", "will", "keep", "never", "no", "matter", "way", "comes", "always", "ever",
                         "rough", "tough", "great", "good", "bad", "crazy", "amazing", "awesome", "hard", "easy",
                         "won't", "can", "sure", "definitely", "totally", "together", "hard", "anything", "whatever",
                         "promise", "want", "guys", "things", "hey", "yeah", "yes", "okay", "ok", "time", "right"))

_INTERJECTIONS = frozenset(("hey", "hi", "hello", "thanks", "thank", "congrats", "congratulations", "wow", "woah", "whoa",
                            "yeah", "yes", "yep", "yup", "nope", "oh", "aww", "haha", "lol", "omg", "cool", "awesome",
                            "great", "amazing", "nice", "sweet", "sure", "totally", "definitely", "absolutely",
                            "glad", "sorry", "bye", "cheers", "woohoo", "yay", "ok", "okay", "alright", "much", "lot"))
# a judgement of the listener or of a thing said: "You're so funny!", "That's amazing", "Sounds like fun"
_JUDGEMENT = re.compile(rf"^(?:(?:haha|oh|wow|aww|yeah|omg|lol)\w*[,!]?\s+)*(?:you're|you are|that's|that is|it's|it is|"
                        rf"this is|how|what an?|so|sounds|looks|seems)\s+(?:so\s+|really\s+|very\s+|such\s+(?:an?\s+)?|"
                        rf"totally\s+|pretty\s+|like\s+(?:an?\s+)?)?(?:{_JUDGED}|funny|sweet|cute|lovely|inspiring|"
                        rf"impressive|incredible|beautiful|adorable|hilarious|exciting|fun)\b[^,;]*$", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|\d+")
MIN_CONTENT_WORDS = 2
_LETTER = re.compile(r"[A-Za-z\u3400-\u9fff]")


def sentences(text: str) -> list[str]:
    """A turn cut into sentences at the end marks of both languages and at line breaks, without emoji."""
    return [s for s in (_without_symbols(p) for p in _SENTENCE.split(text or "") if p) if s]


def _without_symbols(s: str) -> str:
    return " ".join("".join(c for c in s if unicodedata.category(c) not in ("So", "Sk", "Cf")
                            and not "\ufe00" <= c <= "\ufe0f").split())  # emoji and their variation selectors


def extract(text: str, speaker: str = "", role: str = "user") -> list[Item]:
    """The item a turn states: its kept sentences joined, typed by the strongest kind among them (a turn becomes
    at most one memory line, so capture never stores more lines than the raw turn). A character's or
    assistant's turn keeps only what it says about the user and what it commits to."""
    assistant = (role or "").lower() in _ASSISTANT_ROLES
    said = sentences(text)
    judged = [judge(sent, assistant) for sent in said]
    kinds = [j[0] for j in judged if j is not None]
    if not kinds:
        return []
    weight = max(j[1] for j in judged if j is not None)
    # a person's kept message keeps what it says around its facts (the question asked later may be about a
    # sibling sentence: "Love experimenting with spices"); only chatter goes. An assistant keeps its facts alone
    kept = [s for s, j in zip(said, judged) if j is not None or (not assistant and not _chatter(s))]
    return [Item(_joined(kept), next(k for k in _STRONGEST if k in kinds), weight, speaker)]


_STRONGEST = ("instruction", "preference", "decision", "entity", "fact", "episodic")


def judge(sentence: str, assistant: bool = False) -> tuple[str, int] | None:
    """(memory type, importance 1-5) when the sentence is worth keeping, None for chit-chat."""
    s = sentence.strip().translate(_APOSTROPHES)
    if len(_LETTER.findall(s)) < 3:
        return None  # emoji, "ok", punctuation
    if has_han(s):
        return judge_zh(s, assistant)
    return _judge_en(s, assistant)


def _judge_en(s: str, assistant: bool) -> tuple[str, int] | None:
    if sum(1 for w in _WORD.findall(s) if not is_stopword(w)) < MIN_CONTENT_WORDS:
        return None  # "Yes, I did." "I definitely will.": nothing said that a later question could ask about
    if _pep(s):
        return None  # I'll keep pushing, I won't let you down, Never give up!
    asks = _REMEMBER.search(s) is not None
    if assistant:
        if _YOU.search(s) and not s.rstrip().endswith("?"):
            return ("preference" if re.search(r"\b(?:like|love|prefer|hate|enjoy)\b", s, re.I) else "fact"), 3
        if _COMMIT.search(s) and not s.rstrip().endswith("?"):
            return "decision", 3
        return None
    if s.rstrip().endswith("?") and not asks and (_QUESTION_HEAD.match(s) or not _fact_shape(s)
                                                  or not re.search(r"\b(?:i|i'm|i've|i'd|my|we|we're|we've|our)\b", s, re.I)):
        return None
    if asks:
        rest = _after_remember(s)
        if _IMPERATIVE.search(rest):
            return "instruction", 4
        kind = _kind(s)
        return None if kind is None and re.match(r"i\b|i'm\b|we\b", rest, re.I) else (kind or "fact", 4)
    kind = _kind(s)
    if kind is None:
        return None
    if not _ME_SINGULAR.search(s) and _GENERAL.search(s) and not re.search(rf"\bwe\s+(?:all\s+)?{_PAST}", s, re.I):
        return None
    return kind, {"preference": 3, "entity": 3, "fact": 3, "decision": 3}.get(kind, 2)


def _pep(s: str) -> bool:
    """Encouragement and nothing else: what is left without its pep phrases and the names called holds fewer than
    three content words (two let "I'm staying positive and taking it slow" through on LoCoMo's dev turns)."""
    if not _PEP.search(s):
        return False
    rest = _VOCATIVE.sub(" ", _PEP.sub(" ", s))
    return sum(1 for w in _WORD.findall(rest) if not is_stopword(w) and w.lower() not in _PEP_FILLER) < 3


def _chatter(s: str) -> bool:
    """Nothing a later question could ask about: a question, a greeting or thanks, pep talk, a bare reaction."""
    s = s.strip().translate(_APOSTROPHES)
    if has_han(s):
        return chatter_zh(s)
    if s.endswith("?") or _pep(s) or _JUDGEMENT.match(s):
        return True
    return sum(1 for w in _WORD.findall(_VOCATIVE.sub(" ", s)) if not is_stopword(w)
               and w.lower() not in _INTERJECTIONS) < MIN_CONTENT_WORDS


def _after_remember(s: str) -> str:
    return re.sub(r"^.*?\b(?:remember(?: that| to)?|don't forget(?: that| to)?|note that|keep in mind(?: that)?)"
                  r"[:,]?\s*", "", s, count=1, flags=re.I)


def _fact_shape(s: str) -> bool:
    return _kind(s) is not None


def _kind(s: str) -> str | None:
    """The type of fact a sentence's shape states, from its first-person verbs, possessives and time words; a plan
    about "it" or "that" with no date is pep talk."""
    kinds = _kinds(s)
    if not kinds:
        return None
    if _TIME.search(s) and "preference" not in kinds:
        return "episodic"
    kind = next(k for k in ("preference", "decision", "entity", "fact", "episodic") if k in kinds)
    return None if kind == "decision" and _EMPTY_PLAN.search(s) else kind


def _kinds(s: str) -> list[str]:
    s, kinds = _SINCE_CHAT.sub("", s), []
    for m in _VERB_AFTER_ME.finditer(s):
        if m["contr"] and re.search(r"\b(?:what|why|how|whatever|who)\s+$", s[:m.start()], re.I):
            continue  # "why I'm doing it", "what we're going through": a clause, not a statement
        what = (m["what"] or "").lower()
        if m["contr"]:
            what2 = (m["what2"] or "").lower()
            if _REACT_CONTRACTION.match(what2):
                continue
            what = {"i'm": "am ", "we're": "are ", "i've": "have ", "we've": "have ", "i'll": "will ",
                    "we'll": "will ", "i'd": "would "}[m["contr"].lower()] + what2
            if m["contr"].lower() in ("i'm", "we're") and not re.match(
                    rf"{_STATE}|{_PREFER}|{_PLAN}", what, re.I):
                continue  # I'm pumped, I'm down, we're ready: a mood, not a fact
        if not what or re.match(_REACTION, what, re.I):
            continue
        kinds.append(_verb_kind(what, bool(m["neg"])))
    if _ELIDED_ME.search(s):
        kinds.append("episodic")
    if _ELIDED_PLAN.search(s):
        kinds.append("decision")
    if _ELIDED_LIKE.search(s):
        kinds.append("preference")
    if re.search(r"\b(?:can't|cannot) wait\b", s, re.I) and _TIME.search(s):
        kinds.append("decision")  # "Can't wait for tomorrow's opening": an event with its day
    if _OTHERS.search(s) or _SHOWN.search(s):
        kinds.append("fact")
    if _HABIT.search(s) or _DESCRIBED.search(s):
        kinds.append("fact")
    if _RELATION.search(s):
        kinds.append("entity")
    elif _POSSESSIVE.search(s) or _THIRD.search(s):
        kinds.append("fact")
    return kinds


def _verb_kind(what: str, negated: bool) -> str:
    if re.match(rf"(?:would\s+)?{_PREFER}", what, re.I) or (negated and re.match(r"(?:eat|drink|smoke|like|use)\b", what)):
        return "preference"
    if re.match(r"(?:would|will|shall|am going|are going|am gonna|plan|planned|am planning|intend|decided|"
                r"want|wanna|'d like|hope to|need to|have to|got to|am about|might|may)\b", what):
        return "decision"
    if re.match(_PAST, what) and not re.match(_PLACE, what):
        return "episodic"
    return "fact"


def _joined(parts: list[str]) -> str:
    out = ""
    for p in parts:
        sep = "" if not out or has_han(out[-1:]) or out[-1:] in "。！？；" else " "
        out += sep + p
    return out
