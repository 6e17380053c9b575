"""The answer layer's remaining hand rules, as data: named cues, each a pattern with the sentences
it is written for (tests check every cue matches its examples) and the validation figure that
keeps it. None of them decides an answer alone: the role and question cues are features of the
sentence scorer (`rag.answer.sentences`), whose weights are fitted; `MANY` picks which of two
fitted thresholds applies; `BACK_REFERENCE` says when a question is condensed with its history.

- ROLES (proposal, method, result, data, background): the sentence scorer's top-2 hit rate on the
  validation split is 0.89 with them, 0.57 by cosine alone (209 items; `eval/fit_sentences.py`).
- ASKS (a number, a method, data): interacted with the roles in the same model. A "how" asked after
  a clause ("Since a full dataset is infeasible, how does OV-MER …") asks for a method too: read
  anywhere, with the scorer refitted, validation fact stated 0.935 -> 0.940 (how 0.889 -> 0.921)
  and test 0.864 -> 0.876 (how 0.761 -> 0.795), no other figure moved (session 36).
- MANY: plural questions read `list_k` papers and keep them at `keep_many`, the threshold chosen on
  validation questions with several gold papers (precision 0.80, recall 0.46 there, against 0.58
  and 0.90 at the single-answer threshold: `eval/fit_relevance.py`).
- BACK_REFERENCE: a follow-up is condensed only when it points back; on validation, follow-up and
  topic-switch questions over the whole conference are answered from the right paper.
- NEW_SEARCH: a request for papers in a conversation is read as asked, never as a follow-up (on
  validation, short topic questions after a turn about another paper answered from that paper:
  21 of 107 -> 0; `rag.answer.chat.ChatSession.readings`).
- APPLIED_TO, SETTING_LAST: the setting a yes/no question asks a method to have been carried to
  ("… applied to power grid networks?"), which `Relevance.unheld_setting` looks for in the paper
  an answer would lead with (docs/benchmarks.md, session 25, has the figures).
- ASKED_VALUE, MEASURES: a number asked of the paper a question names ("How many experts does
  MENTOR use?"), which `Relevance.unstated_value` looks for next to the words it is asked of.
- EXCLUDED, WIDENED: a filter's value that a clause leaves out ("not counting position papers") or
  adds back ("counting the position track too"), read as an exclusion or as no filter at all.
- MODEL_KINDS, MODEL_FAMILIES, TRAINING_SETTINGS: a detail asked by kind (a base model, a learning
  rate), which `Relevance.unnamed_kind` looks for, as an instance, in the paper a question names.
- ASKED_FOR, REPORTED_VALUE, COMPARATIVE: the detail a question asks for ("How many GPU hours …",
  "Which LLM does …"), which `Relevance.unheld_detail` looks for in the paper the question names,
  whether it is a value the paper reports, and a comparison any number may answer
  (docs/benchmarks.md, sessions 20 and 21, has the figures).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Cue:
    """A named pattern with sentences it is meant to match (checked by the tests)."""

    name: str
    pattern: re.Pattern[str]
    examples: tuple[str, ...]


def _cue(name: str, pattern: str, *examples: str) -> Cue:
    return Cue(name, re.compile(pattern, re.I), examples)


ROLES = (
    _cue(
        "proposal",
        r"\b(?:we|this\s+(?:paper|work))\s+(?:\w+\s+)?(?:propose|introduce|present|develop|design|build)s?\b|"
        r"\b(?:called|named|dubbed)\s|,\s+an?\s+(?:new|novel)\b",
        "We propose SAeUron, a method that uses sparse autoencoders.",
        "In this work we introduce a benchmark for persuasion.",
    ),
    _cue(
        "method",
        r"\b(?:by|via|through|using|leverag\w+|based\s+on|consists?\s+of|first\s+\w+s?\s+then|"
        r"learns?|trains?|computes?|maps?|encodes?|decompos\w+|optimi[sz]\w+|estimat\w+)\b",
        "It learns a mapping by decomposing the activations.",
        "Our method works via kernel thinning.",
    ),
    _cue(
        "result",
        r"\b(?:outperform\w*|surpass\w*|achiev\w+|improv\w+|reduc\w+|show(?:s|ed)?\s+that|find\s+that|"
        r"results?\s+(?:show|demonstrate|indicate)|state-of-the-art|speed-?up|faster|better)\b|\d\s?(?:%|×|x\b)",
        "Experiments show that it outperforms the baselines by 8.5%.",
        "We find that larger models are more robust.",
    ),
    _cue(
        "data",
        r"\b(?:datasets?|benchmarks?|corpus|corpora|trained\s+on|evaluat\w+\s+on|tasks?|suite)\b",
        "We evaluate on ImageNet and COCO.",
        "The benchmark contains 8,316 tasks.",
    ),
    _cue(
        "background",
        r"^(?:however|while|although|despite|recent(?:ly)?|existing|prior|traditional(?:ly)?|current(?:ly)?|"
        r"many|most|in\s+recent\s+years)\b|\b(?:remains?\s+(?:a\s+)?(?:challenge|challenging|open|unclear)|"
        r"(?:is|are)\s+(?:a\s+)?(?:fundamental|crucial|critical|important)|suffer\w*\s+from|limited\s+by)\b",
        "However, existing methods suffer from high cost.",
        "Hallucination remains a challenge for vision-language models.",
    ),
)
ASKS = (
    _cue(
        "asks_number",
        r"\bhow\s+(?:many|much|fast|large|big|long|often|accurate)\b|\bby\s+how\s+much\b|\bwhat\s+(?:\w+\s+){0,2}"
        r"(?:accuracy|percentage|rate|score|speed-?up|improvement|size|number|value|error)\b|\bwhat\s+number\b",
        "How many tasks does PaperBench contain?",
        "What accuracy does it reach?",
    ),
    _cue(
        "asks_method",
        r"^\s*how\b(?!\s+(?:many|much|well|fast|large|long|often))|\bhow\s+(?:do|does|did|can|could|is|are|was|were)\b|"
        r"\bwhat\s+(?:method|approach|technique|mechanism)s?\b|"
        r"\bapproaches\b",
        "How does CTE work?",
        "Since labels are scarce, how do they train it?",
        "What are the main approaches to detecting hallucinations?",
    ),
    _cue(
        "asks_data",
        r"\b(?:datasets?|benchmarks?|data|corpus|evaluat\w+\s+on|tested\s+on)\b",
        "Which datasets exist for multimodal hallucination?",
        "What data did they test it on?",
    ),
)

MANY = _cue(
    "many",
    r"\b(?:papers|works|studies|approaches|methods|datasets|benchmarks|techniques)\b",
    "Which papers use sparse autoencoders?",
    "What are the main approaches to detecting hallucinations?",
)
BACK_REFERENCE = _cue(
    "back_reference",
    r"\b(?:it|its|it's|they|them|their|theirs|this\s+(?:paper|work|method|model|one|approach|study)|"
    r"that\s+(?:paper|work|method|model|one|approach|study)|these|those|the\s+same|"
    r"the\s+(?:paper|method|model|approach|authors|study|framework|benchmark)(?!\s+(?:on|about|that|which|"
    r"of|for|in|introducing|proposing|called|named|where|from)\b))\b",
    "Who are its authors?",
    "What data did they test that method on?",
    "How does that paper evaluate it?",
)
# A request for papers ("Which papers …", "Is there work on …"): a new search of the collection,
# never a follow-up about the papers just discussed unless it also points back ("its", "those").
# "Other papers" compares with them, so it is left to the follow-up readings.
NEW_SEARCH = _cue(
    "new_search",
    r"(?<!\bother\s)\b(?:papers|works|studies|articles|publications)\b|"
    r"\b(?:what|which|any|some)\s+(?:work|research)\b|\b(?:is|are)\s+there\s+(?:a|an|any)?\s*"
    r"(?:paper|work|study|method|approach|benchmark|dataset)s?\b",
    "Which papers propose new optimizers for training neural networks?",
    "What work applies Bayesian optimization to autonomous driving?",
    "Is there a paper on watermarking diffusion models?",
)

# A facet value (venue, year, track, decision; written <value> in the examples) that a clause leaves
# out or adds back: "not counting position papers", "excluding ICLR", "non-oral", "ICLR left out";
# "counting the position track too", "orals included". Read on the text around each value the
# question names (`rag.answer.query.recognise_filters`), never as a filter of its own: read as one, the
# value an exclusion names was counted in its stead (writers' train and validation counts, 2 of 8;
# docs/benchmarks.md, session 33, has the figures).
_CLAUSE_FILLER = (
    r"(?:(?:the|a|an|any|all|those|these|ones?|papers?|in|from|at|as|of|to|for|be|been|being|get|got|"
    r"getting|receiv\w+|accepted|given|label+ed|marked|that|which|were|was|are|is|count\w*|includ\w*)\s+){0,4}"
)
# A cue after the value closes its clause ("…, position papers excluded?", "(ICML not counted)") and the
# value opens one (after a comma, a parenthesis, "and", "with", "leaving"): "Which oral papers also study
# X?", "Which ICLR papers dropped the KL term?" and "How many spotlights are position papers too?" name a filter.
_OPENS = r"(?:[,(;—–]\s*(?:(?:and|with)\s+)?|\b(?:and|with|leaving|leave)\s+|\bw/\s*)(?:(?:the|any)\s+)?"
_CLOSES = r"(?=\s*(?:[?.!,;:)]|—|–|$))"
EXCLUDED = (
    _cue(
        "excluded_before",
        # a negative contraction opens a clause only after a word that is no question's opening:
        # "papers that weren't posters", not "Didn't an ICLR paper propose X?" or "Why don't ICML papers …?"
        r"\b(?:not|no|neither|nor|excluding|exclud(?:e|es|ed)|except|other\s+than|apart\s+from|"
        r"aside\s+from|besides|leaving\s+out|leave\s+out|without|minus|outside(?:\s+of)?|ignoring|ignore|"
        r"omitting|omit|discounting|disregarding|skipping|skip|rather\s+than|instead\s+of|"
        r"(?<=\w\s)(?<!\bwhy\s)(?<!\bhow\s)\w+n['’]t|don['’]t(?=\s+(?:includ|count)))\s+" + _CLAUSE_FILLER + r"<value>",
        "how many main-track posters at ICML 2025 (not counting <value>)?",
        "ICLR 2025 papers that weren't <value>",
        "2025 spotlights excluding <value>",
        "How many ICML 2025 orals are there? Don't include <value>.",
    ),
    _cue(
        "excluded_prefix",
        # "non-" before a value that names papers ("non-poster papers", "non-position ICML 2025 orals"),
        # not a topic ("speech recognition for non-oral languages")
        r"\bnon[- ]<value>(?=\s+(?:(?-i:[A-Z0-9])|(?:papers?|ones|works|submissions|presentations|acceptances|"
        r"accepts|tracks?|orals?|spotlights?|posters?)\b)|\s*(?:[?.!,;:)]|$))",
        "how many non-<value> papers",
        "How many non-<value> ICML 2025 orals?",
    ),
    _cue(
        "excluded_after",
        _OPENS + r"<value>(?:\s+(?:papers?|track|ones))?\s*,?\s*(?:excluded|aside|left\s+out|not\s+included|"
        r"not\s+counted|removed|dropped|out)" + _CLOSES,
        "how many ICML 2025 posters, <value> excluded?",
        "2025 orals, leaving <value> out",
        "How many spotlights in 2025 (<value> not counted)?",
    ),
)
WIDENED = (
    _cue(
        "widened_before",
        r"\b(?:including|include[sd]?|incl\.?|counting|plus|as\s+well\s+as|along\s+with|together\s+with|"
        r"not\s+(?:just|only|merely))\s+" + _CLAUSE_FILLER + r"<value>",
        "how many ICML 2025 papers got an oral, counting the <value> too?",
        "ICML 2025 orals including <value>",
        "How many ICML 2025 papers got an oral, not just in the <value>?",
    ),
    _cue(
        "widened_after",
        _OPENS + r"<value>(?:\s+(?:papers?|track|ones))?\s*,?\s*(?:too|as\s+well|included|counted|alike|"
        r"and\s+all|in)" + _CLOSES,
        "ICML 2025 orals, <value> included",
        "ICML 2025 orals with <value> too",
        "how many ICML 2025 papers in total with <value> in?",
        "ICML 2025 orals, and the <value> ones too — total?",
    ),
)

# How a question that asks for a detail may open ("And how many …", "So which …").
_OPENING = r"^\s*(?:(?:and|so|ok|in)\s+)?"
# The words between a leading what / which / how many / how much and an auxiliary verb (or "of"):
# the detail asked for ("GPU hours", "BLEU score", "LLM"). A question whose words after "what" run
# into another verb ("What work applies proteins to …") asks for papers on a topic, not a detail.
ASKED_FOR = _cue(
    "asked_for",
    _OPENING + r"(?:what|which|how\s+many|how\s+much)\s+((?:[\w'/.%-]+\s+){0,4}?)"
    r"(?:does|do|did|is|are|was|were|has|have|had|can|could|would|will|should|of)\b",
    "How many GPU hours did it take to train Proteina?",
    "Which LLM does GRAIL use to write the programs?",
    "What BLEU score does AEQA-NAT obtain on WMT14?",
    "What fraction of the weights does SeleKT update?",
)
# A "what / which X" question that asks for a value the paper reports ("What AUROC does BoxLM reach
# …?"), not for a thing it uses ("Which simulator is AdaWM evaluated in?", answered by "CARLA"):
# a value needs its measure named, a thing may be named only as an instance. The verb is the main
# clause's: after the auxiliary and before any "to / which / when …" clause or comma ("Which
# dataset does X use to get …" asks for a thing; "What end-to-end latency …" and "What speedup
# compared to …" have their "to" before it), and "get evaluated" is a passive, not a value got.
REPORTED_VALUE = _cue(
    "reported_value",
    _OPENING + r"(?:what|which|how\s+many|how\s+much)\b[^,;]*?"
    r"\b(?:does|do|did|is|are|was|were|has|have|had|can|could|would|will|should)\b"
    r"(?:(?!(?<!\S)(?:to|which|when|while|where|so\s+that|in\s+order)(?!\S))[^,;])*?"
    r"\b(?:reach|reaches|reached|(?:get|gets|got)(?!\s+(?!(?:then|even|seven|often|open|when)\b)[\w-]+(?:ed|en)\b)|"
    r"achieve|achieves|achieved|obtain|obtains|obtained|attain|attains|attained|score|scores|scored|report|"
    r"reports|reported|yield|yields|yielded)\b",
    "What AUROC does BoxLM reach on MIMIC-IV?",
    "What score does LLaVA-Mini get on MMBench?",
    "And which accuracy is reported for DeepSeek-V3 on GSM8K?",
    "What end-to-end latency does FlashServe achieve?",
    "What speedup compared to FlashAttention does XAttention achieve?",
    "What accuracy does that method reach on GSM8K?",
    "What accuracy did MoHD get then?",
)
# A detail asked as a count or an amount ("How many GPU hours …"): a measure, never a thing.
QUANTITY = _cue(
    "quantity",
    _OPENING + r"how\s+(?:many|much)\b",
    "How many GPU hours did it take to train Proteina?",
    "How much memory does DMILO save?",
)
# "How much faster / better …": any number of the abstract may answer it ("a 3x speed-up").
COMPARATIVE = _cue(
    "comparative",
    _OPENING + r"how\s+much\s+(?:more|less|better|worse|faster|slower|larger|smaller|higher|"
    r"lower|fewer|greater|cheaper|longer|shorter|bigger)\b",
    "How much faster is attention computation with XAttention?",
    "How much better does MoHD perform than a Transformer?",
)
# A question asking a number of the paper it names, and the words it asks it of: "How many experts
# does MENTOR use?", "What masking ratio does MEAP use?" (a measure of `MEASURES` among the words),
# which `Relevance.unstated_value` looks for, next to a number, in that paper's abstract. Unlike
# `ASKED_FOR` the words may run on past "of" ("What fraction of the weights does …").
ASKED_VALUE = _cue(
    "asked_value",
    _OPENING + r"(?:on\s+average\s+)?(?:(?P<what>what)(?:'s|\s+is|\s+are)?|which|how\s+many|how\s+much)\s+"
    r"(?P<detail>(?:[\w'/.%@()-]+\s+){0,6}?)(?:does|do|did|is|are|was|were|has|have|had|can)\b",
    "How many experts does MENTOR's mixture-of-experts backbone use?",
    "What masking ratio does MEAP use during pretraining?",
    "What fraction of the weights does SeleKT update?",
    "On average how many insights are planted in each InsightBench dataset?",
)
# Words that make a "what …" question ask for a number ("What LoRA rank …", "What learning rate …");
# a "which …" question asks for a thing ("Which error rate does g-LOND control?": the FDR).
MEASURES = frozenset(
    "accuracy score scores rate rates ratio fraction percentage proportion rank size number value values perplexity "
    "error latency speedup speed-up throughput epochs steps auroc auc f1 bleu rouge rouge-l mae rmse mse fid "
    "top-1 top-5 pass@1 pass@k complexity beta budget memory cost".split()
)
# A detail asked by kind, which a named paper answers only by naming an instance of it
# (`Relevance.unnamed_kind`): a pretrained model ("Which base LLM …", "Which foundation model …")
# or a training setting ("What learning rate …"). `MODEL_KINDS` ask for one alone; "model" does
# after a word of `PRETRAINED` ("base model", "8B instruct model"), not after another ("generative
# model", "surrogate model", "world model": often answered by a type, "a Gaussian process"). A
# backbone or an encoder may be a type too ("a transformer", "a GNN"), so neither is read. "What
# kind of model" asks for a category, not an instance.
WHICH = _cue(
    "which",
    _OPENING + r"(?:on\s+average\s+)?(?:what|which)\b",
    "Which base LLM does ChartMoE build its connector on?",
    "And what foundation model does PlanSearch run on?",
)
MODEL_KINDS = frozenset("llm llms lm lms vlm vlms mllm mllms".split())
MODEL_WORDS = frozenset("model models".split())
PRETRAINED = frozenset(
    "base foundation language pretrained pre-trained instruct instruction-tuned chat open-source open-weight "
    "proprietary closed-source frontier teacher judge multimodal vision-language".split()
)
KIND_OF = frozenset("kind kinds type types sort sorts".split())
# Families of pretrained networks, as abstracts name them: a name with a digit ("GPT-4o",
# "Llama-3-8B", "ResNet-50") is one whatever its family; these are the families often named
# without one ("Pythia, Qwen and Llama models", "Claude 3.5 Sonnet", "OPT").
MODEL_FAMILIES = tuple(
    "GPT ChatGPT Claude Gemini Gemma PaLM Bard LLaMA Llama Vicuna Alpaca Mistral Mixtral "
    "Qwen Phi DeepSeek Falcon BLOOM OPT Pythia OLMo Zephyr Tulu Orca Nemotron Granite Yi Baichuan ChatGLM GLM "
    "InternLM InternVL MiniCPM LLaVA BLIP Flamingo Idefics Fuyu Kosmos Molmo Pixtral Chameleon Emu CogVLM "
    "T5 BERT RoBERTa DeBERTa ELECTRA XLNet StarCoder CodeLlama CodeT5 Codex Galactica Chinchilla Gopher "
    "Mamba RWKV Jamba Grok CLIP SigLIP DINO DINOv2 ViT DeiT ResNet ConvNeXt Swin EfficientNet VGG SAM UNet "
    "U-Net DiT SDXL Stable-Diffusion Imagen DALL-E PixArt FLUX Whisper wav2vec HuBERT ESM AlphaFold "
    "GCN GAT GIN GraphSAGE".split()
) + ("Stable Diffusion",)
# Training settings asked of a paper ("What batch size and learning rate were used …?"), each with
# what an abstract that states it must hold: the setting's own head word, or a way of writing it
# ("lr", "step size"; "mask" for a masking ratio, which "we mask 75% of patches" gives).
TRAINING_SETTINGS = (
    (r"learning[- ]rates?", r"learning[- ]rates?|lr|step[- ]sizes?"),
    (r"batch[- ]sizes?", r"batch\w*"),
    (r"epochs?", r"epochs?"),
    (r"warm-?up(?:\s+steps)?", r"warm-?up"),
    (r"weight[- ]decay", r"weight[- ]decay"),
    (r"dropout(?:\s+rates?)?", r"dropout"),
    (r"(?:lora|adapter)\s+ranks?", r"\w*rank\w*"),
    (r"beta|β", r"beta|β"),
    (r"mask(?:ing)?\s+(?:ratio|rate)s?", r"mask\w*"),
)

# A yes/no question whether a method was carried to a setting ("Has graph domain adaptation been
# applied to power grid networks?"): the setting is the part after the participle, which
# `Relevance.unheld_setting` looks for in the paper an answer would lead with.
PARTICIPLES = (
    r"applied|used|evaluated|tested|extended|adapted|built|designed|deployed|studied|benchmarked|"
    r"validated|explored|tried|developed|trained|demonstrated|transferred|generali[sz]ed|tailored|"
    r"aimed|targeted|done|run"
)
APPLIED_TO = _cue(
    "applied_to",
    r"^\W*(?:has|have|is\s+there|are\s+there|was|were|can|could|does|do|did|is|are)\b(?P<subject>.*)\b"
    rf"(?:{PARTICIPLES})\s+(?:\w+ly\s+)?(?:to|on|for|in|into|with|at)\s+(?P<setting>[^?]+?)\s*\?*\s*$",
    "Has graph domain adaptation been applied to power grid networks?",
    "Are there robust cardinality sketches evaluated on network traffic monitoring?",
    "Are there synthetic face recognition datasets built specifically for children's faces?",
)
# A yes/no question whether some work exists, whose last phrase names the setting ("Are there
# instruction-following retrieval benchmarks for Korean?"). `Relevance.unheld_setting` reads both
# forms in questions of at most `SETTING_WORDS` words: in a longer one the last phrase is one detail
# of many, often reworded.
SETTING_LAST = _cue(
    "setting_last",
    r"^\W*(?:has|have|is|are|was|were|can|could|does|do|did|any)\b(?P<subject>.*)\b(?:to|for|on|in|into|with|at|across|beyond)\s+"
    r"(?P<setting>(?:(?!\b(?:to|for|on|in|into|with|at|across|beyond)\b)[^?])+?)\s*\?*\s*$",
    "Are there instruction-following retrieval benchmarks for Korean?",
    "Has anyone applied generative models of limit order books to cryptocurrency exchanges?",
    "Is there work on differentially private hierarchical clustering for streaming data?",
)
SETTING_WORDS = 16
# Words that say what sort of answer is wanted, not which detail ("what kind of", "which paper",
# "what approaches"), the measure a number is given in ("what fraction of", "what percentage"), or a
# catalogue field ("how many authors"): a question asking only these asks the abstract for no detail.
SORT_OF_ANSWER = frozenset(
    "approach approaches kind kinds type types sort sorts method methods work works paper papers research "
    "exist exists way ways technique techniques idea ideas problem problems proposal propose proposes "
    "introduce introduces introduced main new result results model models "
    "percentage percent fraction proportion share portion amount number size rate ratio much many "
    "author authors year venue conference track area decision title".split()
)


def cues(text: str, table: Sequence[Cue]) -> list[float]:
    """1.0 for each cue of the table the text matches, else 0.0."""
    return [1.0 if c.pattern.search(text) else 0.0 for c in table]
