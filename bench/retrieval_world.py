"""The world of the retrieval-quality benchmark (bench/retrieval_quality.py), written for gligabao.

About 2,000 facts over time: ~220 people (a dozen called Alice, ten Bob, several Carol and David),
their employers, homes, schools, instruments, friends and birthplaces; organizations with their
headquarters, founders and products; projects; job changes and moves a year or two later (the
old fact is superseded); long texts (reports, minutes) whose passages hold facts that are not
extracted as edges. Each text comes with its scripted extraction (what a model would reply), so
the benchmark measures retrieval, not extraction. Then 100+ questions by category, each with its
gold facts (source, relation, target) and passages (a sentence the chunk holds).

Everything is drawn from a seeded generator: the same world on every run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

NAMESAKES = {"Alice": 12, "Bob": 10, "Carol": 6, "David": 6}
FIRST_NAMES = """Aaron Abigail Adrian Agnes Albert Amara Andrea Anton Ava Basil Beatrice Bianca Boris Bruno
Caleb Camille Cedric Clara Colin Daphne Dmitri Edgar Elena Elias Elise Emil Esther Felix Fiona Flora
Gabriel Greta Hannah Hector Helena Hugo Ida Igor Ines Isaac Ivy Jasper Jonas Julia Kai Karim Katya
Laila Lars Lena Leon Lidia Linus Lucia Magnus Maia Marco Mila Milo Nadia Nico Nina Noah Olga Oscar
Otto Paloma Pavel Petra Quentin Rafael Rosa Ruben Sabine Sami Selma Simon Sofia Stellan Tara Theo
Tobias Uma Valentin Vera Viktor Wanda Xavier Yara Yusuf Zara Zoltan Aurelio Benedikt Cosima Dorian
Eleni Fabian Gisela Henrik Ilse Joaquim Kasimir Leonie Mathis Nora Orla Pia Rasmus Solveig Tilda
Ulrich Valeria Wolfgang Ximena Yannick Zelda Anouk Bastien Celine Dario Emeric Frida Gustav Hedda
Imre Jorund Klara Lorenz Malte Nell Odile Piet Rune Sanne Thorsten Ulla Vilja Wilhelmina""".split()
SURNAMES = """Martin Chen Dubois Novak Fischer Garcia Hughes Ito Jones Klein Lopez Moreau Adams Brown
Costa Duarte Eriksen Ferreira Gallo Hartmann Ibarra Jansen Kowalski Larsen Meyer Nakamura Olsen
Petrov Quinn Rossi Schmidt Tanaka Ueda Varga Weber Yilmaz Zimmermann Berg Caron Dahl Engel Falk
Grau Holm Ivanova Jung Kraus Lindqvist Marsh Nyberg Ortiz Pohl Reyes Sato Thorne Vidal Wolff""".split()
ROLES = [
    "pediatrician",
    "violinist",
    "architect",
    "data scientist",
    "nurse",
    "carpenter",
    "pilot",
    "translator",
    "chemist",
    "journalist",
    "baker",
    "firefighter",
    "librarian",
    "geologist",
    "photographer",
    "pharmacist",
    "economist",
    "veterinarian",
    "cartographer",
    "sommelier",
    "electrician",
    "dentist",
    "physiotherapist",
    "actuary",
    "botanist",
    "locksmith",
]
CITIES = {
    "Lyon": "France",
    "Porto": "Portugal",
    "Oslo": "Norway",
    "Gdansk": "Poland",
    "Bilbao": "Spain",
    "Ghent": "Belgium",
    "Turin": "Italy",
    "Utrecht": "Netherlands",
    "Aarhus": "Denmark",
    "Graz": "Austria",
    "Tampere": "Finland",
    "Brno": "Czechia",
    "Cork": "Ireland",
    "Basel": "Switzerland",
    "Leipzig": "Germany",
    "Malmo": "Sweden",
    "Bergen": "Norway",
    "Seville": "Spain",
    "Nantes": "France",
    "Bologna": "Italy",
    "Krakow": "Poland",
    "Lille": "France",
    "Freiburg": "Germany",
    "Galway": "Ireland",
    "Coimbra": "Portugal",
    "Uppsala": "Sweden",
    "Trieste": "Italy",
    "Rotterdam": "Netherlands",
    "Salzburg": "Austria",
    "Tartu": "Estonia",
}
INDUSTRIES = [
    ("robotics", "warehouse robots"),
    ("food", "frozen dumplings"),
    ("solar energy", "solar panels"),
    ("shipping", "container ships"),
    ("software", "payroll software"),
    ("textile", "wool sweaters"),
    ("pharmaceutical", "allergy tablets"),
    ("aerospace", "satellite antennas"),
    ("publishing", "travel guides"),
    ("bicycle", "cargo bikes"),
    ("coffee", "roasted coffee beans"),
    ("toy", "wooden puzzles"),
    ("brewing", "craft beer"),
    ("furniture", "oak tables"),
    ("medical devices", "hearing aids"),
    ("gaming", "board games"),
    ("ceramics", "porcelain cups"),
    ("battery", "lithium batteries"),
    ("insurance", "flood insurance"),
    ("water", "water filters"),
]
ORG_WORDS = """Acme Globex Initech Umbra Vertex Halcyon Nimbus Orion Pioneer Quasar Summit Tidewater
Borealis Cobalt Driftwood Ember Fjord Granite Harbor Ironwood Juniper Kestrel Lumen Meridian Northwind
Obsidian Polaris Redwood Sable Tundra""".split()
LANGUAGES = "Polish Danish Greek Basque Catalan Finnish Hungarian Czech Dutch Italian Welsh Estonian".split()
INSTRUMENTS = "violin cello piano trumpet flute drums harp guitar clarinet accordion oboe banjo".split()
UNIVERSITIES = [f"University of {city}" for city in list(CITIES)[:12]]
PROJECTS = """Atlas Beacon Cascade Delta Echo Falcon Glacier Harbinger Ion Jade Keystone Lantern Mosaic
Nova Opal Prism Quill Raven Sierra Talon""".split()

REFERENCE = datetime(2022, 6, 1, tzinfo=UTC)  # profiles are told then
LATER = datetime(2024, 9, 1, tzinfo=UTC)  # job changes and moves are told then
HISTORY_AS_OF = datetime(2023, 1, 1, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Fact:
    source: str
    relation: str
    target: str
    sentence: str
    valid_at: datetime | None = None


@dataclass
class Text:
    """One remember: the text, when it is told, and the extraction a model would reply (per chunk
    for a long text: `chunk_replies` maps a sentence of the chunk to its reply)."""

    text: str
    reference_time: datetime
    entities: list[dict] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    chunk_summaries: list[tuple[str, str]] = field(default_factory=list)  # (marker sentence, summary)

    def reply(self) -> dict:
        return {
            "entities": [{k: v for k, v in entity.items() if k != "means"} for entity in self.entities],
            "edges": [
                {
                    "source": f.source,
                    "target": f.target,
                    "relation": f.relation,
                    "description": f.sentence,
                    "valid_at": iso(f.valid_at) if f.valid_at else None,
                    "invalid_at": None,
                }
                for f in self.facts
            ],
        }


@dataclass
class Question:
    category: str
    text: str
    gold_facts: list[tuple[str, str, str]] = field(default_factory=list)
    gold_passages: list[str] = field(default_factory=list)  # a sentence of the passage
    as_of: datetime | None = None


@dataclass
class Person:
    name: str
    first: str
    role: str
    employer: str
    city: str
    born: str
    university: str
    instrument: str
    language: str = ""
    friends: list[str] = field(default_factory=list)
    new_employer: str | None = None
    new_city: str | None = None


@dataclass
class World:
    texts: list[Text]
    questions: list[Question]
    people: list[Person] = field(default_factory=list)
    orgs: dict[str, dict] = field(default_factory=dict)
    # The relations of which a subject holds one at a time: a new one contradicts the stored one
    # (what the scripted resolve stage of bench/retrieval_quality.py replies).
    functional: frozenset[str] = frozenset({"works_at", "lives_in"})


def article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def build_world(seed: int = 17, scale: float = 1.0) -> World:
    """The world and its questions; `scale` < 1 makes a smaller one (the smoke run)."""
    rng = random.Random(seed)
    cities = list(CITIES)[: max(8, round(len(CITIES) * scale))]
    orgs: dict[str, dict] = {}
    for word, (industry, product) in zip(
        ORG_WORDS[: max(6, round(len(ORG_WORDS) * scale))], INDUSTRIES * 2, strict=False
    ):
        name = f"{word} {industry.split()[0].capitalize()}"
        if industry == "software":
            name = f"{word} Systems"
        orgs[name] = {
            "industry": industry,
            "product": f"{product} ({word})" if name in orgs else product,
            "hq": rng.choice(cities),
        }
    org_names = list(orgs)
    # Products are unique per company: a repeated industry sells a variant.
    seen: set[str] = set()
    for name in org_names:
        product = orgs[name]["product"]
        if product in seen:
            orgs[name]["product"] = f"{rng.choice(['premium', 'compact', 'budget', 'heavy-duty'])} {product}"
        seen.add(orgs[name]["product"])

    firsts = [first for first, count in NAMESAKES.items() for _ in range(max(2, round(count * scale)))]
    firsts += FIRST_NAMES[: max(10, round(len(FIRST_NAMES) * scale))]
    firsts += FIRST_NAMES[::2][: round(len(FIRST_NAMES[::2]) * scale)]  # more namesakes, other surnames
    used: set[str] = set()
    people: list[Person] = []
    for first in firsts:
        surname = rng.choice(SURNAMES)
        while f"{first} {surname}" in used:
            surname = rng.choice(SURNAMES)
        used.add(f"{first} {surname}")
        people.append(
            Person(
                name=f"{first} {surname}",
                first=first,
                role=rng.choice(ROLES),
                employer=rng.choice(org_names),
                city=rng.choice(cities),
                born=rng.choice(cities),
                university=rng.choice(UNIVERSITIES),
                instrument=rng.choice(INSTRUMENTS),
                language=rng.choice(LANGUAGES),
            )
        )
    for person in people:
        person.friends = [p.name for p in rng.sample(people, 2) if p.name != person.name][:1]
    # Namesakes must be told apart by role: each first name's holders get distinct roles.
    for first in NAMESAKES:
        holders = [p for p in people if p.first == first]
        for person, role in zip(holders, rng.sample(ROLES, len(holders)), strict=False):
            person.role = role
    founders = {org: rng.choice(people).name for org in org_names}
    movers = rng.sample(people, len(people) // 5)
    for person in movers[: len(movers) // 2 + 1]:
        person.new_employer = rng.choice([o for o in org_names if o != person.employer])
    for person in movers[len(movers) // 2 + 1 :]:
        person.new_city = rng.choice([c for c in cities if c != person.city])

    texts: list[Text] = []
    for city in cities:
        country = CITIES[city]
        texts.append(
            Text(
                f"{city} is a city in {country}.",
                REFERENCE,
                [
                    {"name": city, "type": "city", "description": f"a city in {country}"},
                    {"name": country, "type": "country", "description": "a country in Europe"},
                ],
                [Fact(city, "located_in", country, f"{city} is a city in {country}.")],
            )
        )
    for org, info in orgs.items():
        founder = founders[org]
        founded = datetime(rng.randint(1990, 2015), 1, 1, tzinfo=UTC)
        facts = [
            Fact(org, "headquartered_in", info["hq"], f"{org} is headquartered in {info['hq']}."),
            Fact(founder, "founded", org, f"{founder} founded {org} in {founded.year}.", founded),
            Fact(org, "makes", info["product"], f"{org} makes {info['product']}."),
        ]
        texts.append(
            Text(
                f"{org} is {article(info['industry'])} {info['industry']} company headquartered in {info['hq']}. "
                f"It was founded by {founder} in {founded.year}. {org} makes {info['product']}.",
                REFERENCE,
                [
                    {
                        "name": org,
                        "type": "organization",
                        "description": f"{article(info['industry'])} {info['industry']} company",
                    },
                    {"name": info["hq"], "type": "city", "description": ""},
                    {"name": founder, "type": "person", "description": ""},
                    {"name": info["product"], "type": "product", "description": f"a product of {org}"},
                ],
                facts,
            )
        )
    for person in people:
        since = datetime(rng.randint(2012, 2021), rng.randint(1, 12), 1, tzinfo=UTC)
        name, first = person.name, person.first
        friend = person.friends[0] if person.friends else None
        facts = [
            Fact(name, "works_at", person.employer, f"{name} works at {person.employer}.", since),
            Fact(name, "lives_in", person.city, f"{name} lives in {person.city}."),
            Fact(name, "was_born_in", person.born, f"{name} was born in {person.born}."),
            Fact(name, "studied_at", person.university, f"{name} studied at the {person.university}."),
            Fact(name, "plays", person.instrument, f"{name} plays the {person.instrument}."),
            Fact(name, "speaks", person.language, f"{name} speaks {person.language}."),
        ]
        sentences = (
            f"{name} is {article(person.role)} {person.role}. Since {since.year}, {first} has worked at "
            f"{person.employer}. {first} lives in {person.city} and was born in {person.born}. "
            f"{first} studied at the {person.university} and plays the {person.instrument} in the evenings. "
            f"{first} speaks {person.language}."
        )
        entities = [
            {"name": name, "type": "person", "description": f"{article(person.role)} {person.role}"},
            {"name": person.employer, "type": "organization", "description": ""},
            {"name": person.city, "type": "city", "description": ""},
            {"name": person.born, "type": "city", "description": ""},
            {"name": person.university, "type": "organization", "description": "a university"},
            {"name": person.instrument, "type": "instrument", "description": "a musical instrument"},
            {"name": person.language, "type": "language", "description": "a language"},
        ]
        if friend:
            facts.append(Fact(name, "is_friends_with", friend, f"{name} is friends with {friend}."))
            sentences += f" {first} is friends with {friend}."
            entities.append({"name": friend, "type": "person", "description": ""})
        texts.append(Text(sentences, REFERENCE, entities, facts))

    project_leads = {}
    for project in PROJECTS[: max(4, int(len(PROJECTS) * scale))]:
        lead, funder = rng.choice(people), rng.choice(org_names)
        project_leads[project] = (lead.name, funder)
        texts.append(
            Text(
                f"Project {project} is led by {lead.name} and funded by {funder}.",
                REFERENCE,
                [
                    {"name": f"Project {project}", "type": "project", "description": "a research project"},
                    {"name": lead.name, "type": "person", "description": ""},
                    {"name": funder, "type": "organization", "description": ""},
                ],
                [
                    Fact(lead.name, "leads", f"Project {project}", f"{lead.name} leads Project {project}."),
                    Fact(funder, "funds", f"Project {project}", f"{funder} funds Project {project}."),
                ],
            )
        )

    for index, person in enumerate(movers):
        if person.new_employer:
            change = datetime(2024, rng.randint(1, 8), 1, tzinfo=UTC)
            # Every other change names the company by its first word, as people do ("joined Acme"):
            # an alias that entity resolution must merge with the company (by its vector only).
            said = person.new_employer.split()[0] if index % 2 else person.new_employer
            employer = {"name": said, "type": "organization", "description": ""}
            if said != person.new_employer:
                employer["means"] = person.new_employer.lower()
            texts.append(
                Text(
                    f"In {change:%B %Y}, {person.name} left {person.employer} and joined {said}.",
                    LATER,
                    [{"name": person.name, "type": "person", "description": ""}, employer],
                    [Fact(person.name, "works_at", said, f"{person.name} works at {said}.", change)],
                )
            )
        else:
            change = datetime(2024, rng.randint(1, 8), 1, tzinfo=UTC)
            texts.append(
                Text(
                    f"{person.name} moved from {person.city} to {person.new_city} in {change:%B %Y}.",
                    LATER,
                    [
                        {"name": person.name, "type": "person", "description": ""},
                        {"name": person.new_city, "type": "city", "description": ""},
                    ],
                    [
                        Fact(
                            person.name,
                            "lives_in",
                            person.new_city,
                            f"{person.name} lives in {person.new_city}.",
                            change,
                        )
                    ],
                )
            )

    documents, needles = long_documents(rng, orgs, people, scale)
    texts.extend(documents)
    questions = make_questions(rng, people, orgs, founders, project_leads, needles, scale)
    return World(texts, questions, people, orgs)


FILLER = [
    "The attendees reviewed the minutes of the previous session and approved them without changes.",
    "Several members asked for the slides to be shared before the next meeting.",
    "A short discussion followed about the schedule for the coming quarter.",
    "The treasurer noted that the accounts were in order and that no invoices were overdue.",
    "Coffee and pastries were served during the break, which lasted about fifteen minutes.",
    "One participant suggested moving the meeting to a larger room next time.",
    "The chair thanked the volunteers who had organised the spring event.",
    "Questions from the floor were mostly about parking and the new badge system.",
    "It was agreed that the working group would report back in two months.",
    "The secretary read out apologies from members who could not attend.",
    "Attendance was slightly lower than usual because of the holidays.",
    "The group discussed whether to publish a newsletter every month or every quarter.",
    "A member proposed a visit to a partner organisation in the autumn.",
    "The meeting closed with a reminder to renew memberships before the end of the year.",
]
NEEDLES = [
    (
        "the budget of the {p} project",
        "The board set the budget of the {p} project at {n} million euros.",
        "What budget was set for the {p} project?",
    ),
    (
        "the venue of the annual dinner",
        "The annual dinner of {o} will take place at the {v} restaurant.",
        "Where will the annual dinner of {o} take place?",
    ),
    (
        "the deadline of the audit",
        "The external audit of {o} must be finished by the end of {m}.",
        "By when must the external audit of {o} be finished?",
    ),
    (
        "the new safety officer",
        "{person} was appointed as the new safety officer of {o}.",
        "Who was appointed safety officer of {o}?",
    ),
    (
        "the fire drill",
        "The next fire drill at the {c} office of {o} is planned for a {d} morning.",
        "When is the next fire drill at the {c} office of {o}?",
    ),
    (
        "the mascot",
        "The staff of {o} voted to name the office cat {cat}.",
        "What is the name of the office cat of {o}?",
    ),
]
VENUES = ["Golden Anchor", "Blue Door", "Copper Kettle", "Old Mill", "Silver Birch", "Red Lantern"]
MONTHS = ["March", "April", "May", "June", "September", "October", "November"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
CATS = ["Pickles", "Biscuit", "Mochi", "Pepper", "Ziggy", "Marmalade", "Noodle", "Pixel"]


def long_documents(rng: random.Random, orgs: dict, people: list[Person], scale: float):
    """Minutes of board meetings: ~11,000 characters each (three chunks), the filler common to all,
    two facts each that only a passage holds (the extraction returns the company and a summary)."""
    documents: list[Text] = []
    needles: list[tuple[str, str, str]] = []  # (question, sentence, category)
    count = max(2, int(8 * scale))
    for index, org in enumerate(list(orgs)[:count]):
        values = {
            "p": PROJECTS[(index * 3 + 5) % len(PROJECTS)],
            "n": round(rng.uniform(1.5, 9.5), 1),
            "o": org,
            "v": rng.choice(VENUES),
            "m": rng.choice(MONTHS),
            "person": rng.choice(people).name,
            "c": orgs[org]["hq"],
            "d": rng.choice(DAYS),
            "cat": rng.choice(CATS),
        }
        kinds = rng.sample(NEEDLES, 2)
        paragraphs = [f"Minutes of the board meeting of {org}, held at its {orgs[org]['hq']} office."]
        placed: list[tuple[int, str, str, str]] = []
        body: list[str] = []
        while sum(len(s) + 1 for s in body) < 10_500:
            body.append(rng.choice(FILLER))
        for kind, position in zip(kinds, (len(body) // 5, 3 * len(body) // 4), strict=True):
            topic, sentence, question = (part.format(**values) for part in kind)
            body.insert(position, sentence)
            placed.append((position, topic, sentence, question))
        paragraphs += body
        text = " ".join(paragraphs)
        topics = " and ".join(topic for _, topic, _, _ in placed)
        documents.append(
            Text(
                text,
                REFERENCE,
                [{"name": org, "type": "organization", "description": ""}],
                [],
                # each chunk's summary names the topics of the needles it holds (as a model's would)
                chunk_summaries=[
                    (sentence, f"Board minutes of {org}: {topic}.") for _, topic, sentence, _ in placed
                ],
            )
        )
        _ = topics
        needles.extend((question, sentence, org) for _, _, sentence, question in placed)
    return documents, needles


def make_questions(rng, people, orgs, founders, project_leads, needles, scale) -> list[Question]:
    n = max(3, int(18 * scale))
    q: list[Question] = []
    movers_job = [p for p in people if p.new_employer]
    movers_city = [p for p in people if p.new_city]
    stayers = [p for p in people if not p.new_employer and not p.new_city and p.first not in NAMESAKES]
    sample = rng.sample(stayers, min(len(stayers), 4 * n))
    direct, para, unnamed, multi = sample[:n], sample[n : 2 * n], sample[2 * n : 3 * n], sample[3 * n : 4 * n]
    forms = [
        ("Where does {n} work?", "works_at", "employer"),
        ("Where does {n} live?", "lives_in", "city"),
        ("What instrument does {n} play?", "plays", "instrument"),
        ("Where was {n} born?", "was_born_in", "born"),
        ("Where did {n} study?", "studied_at", "university"),
    ]
    for i, person in enumerate(direct):
        text, relation, attribute = forms[i % len(forms)]
        q.append(
            Question(
                "direct", text.format(n=person.name), [(person.name, relation, getattr(person, attribute))]
            )
        )
    paraphrases = [
        ("Which company employs {n}?", "works_at", "employer"),
        ("In which town is {n}'s home?", "lives_in", "city"),
        ("Which musical instrument is {n} into?", "plays", "instrument"),
        ("What is the birthplace of {n}?", "was_born_in", "born"),
        ("Which university did {n} attend?", "studied_at", "university"),
        ("Who is {n}'s employer?", "works_at", "employer"),
    ]
    for i, person in enumerate(para):
        text, relation, attribute = paraphrases[i % len(paraphrases)]
        q.append(
            Question(
                "paraphrased",
                text.format(n=person.name),
                [(person.name, relation, getattr(person, attribute))],
            )
        )
    for person in movers_job[: n // 2 + 1]:
        q.append(
            Question(
                "current_state",
                f"Where does {person.name} work now?",
                [(person.name, "works_at", person.new_employer)],
            )
        )
        q.append(
            Question(
                "history_as_of",
                f"Where did {person.name} work?",
                [(person.name, "works_at", person.employer)],
                as_of=HISTORY_AS_OF,
            )
        )
    for person in movers_city[: n // 2 + 1]:
        q.append(
            Question(
                "current_state",
                f"Which city does {person.name} live in today?",
                [(person.name, "lives_in", person.new_city)],
            )
        )
        q.append(
            Question(
                "history_as_of",
                f"Where did {person.name} live?",
                [(person.name, "lives_in", person.city)],
                as_of=HISTORY_AS_OF,
            )
        )
    org_list = list(orgs)
    for person in unnamed[: n // 2]:
        q.append(
            Question(
                "unnamed_entity",
                f"Which {person.role} plays the {person.instrument} and lives in {person.city}?",
                [(person.name, "plays", person.instrument), (person.name, "lives_in", person.city)],
            )
        )
    for org in rng.sample(org_list, n - n // 2):
        q.append(
            Question(
                "unnamed_entity",
                f"Which company makes {orgs[org]['product']}?",
                [(org, "makes", orgs[org]["product"])],
            )
        )
    for i, person in enumerate(multi):
        if i % 3 == 0:
            q.append(
                Question(
                    "multi_hop",
                    f"In which city is the company that {person.name} works for headquartered?",
                    [
                        (person.name, "works_at", person.employer),
                        (person.employer, "headquartered_in", orgs[person.employer]["hq"]),
                    ],
                )
            )
        elif i % 3 == 1:
            org = person.employer
            q.append(
                Question(
                    "multi_hop",
                    f"Where was the founder of {org} born?",
                    [
                        (founders[org], "founded", org),
                        (
                            founders[org],
                            "was_born_in",
                            next(p.born for p in people if p.name == founders[org]),
                        ),
                    ],
                )
            )
        else:
            project, (lead, _funder) = rng.choice(list(project_leads.items()))
            q.append(
                Question(
                    "multi_hop",
                    f"Where does the person who leads Project {project} work?",
                    [
                        (lead, "leads", f"Project {project}"),
                        (lead, "works_at", _current_employer(people, lead)),
                    ],
                )
            )
    for first in NAMESAKES:
        holders = [p for p in people if p.first == first and not p.new_employer and not p.new_city]
        for person in holders[: max(1, n // 6)]:
            q.append(
                Question(
                    "namesake",
                    f"Where does {first}, the {person.role}, work?",
                    [(person.name, "works_at", person.employer)],
                )
            )
    for question, sentence, _org in needles:
        q.append(Question("passage", question, gold_passages=[sentence]))
    unanswerable = [
        "Where does Zebulon Quartermaine work?",
        "What is the blood type of the mayor of Atlantis?",
        "Which astronaut walked on Mars in 2020?",
        "What is the recipe for the soup served on the moon base?",
        "Who won the chess tournament in Lagos?",
        "How many moons does the planet Vulcan have?",
        "What is the password of the office Wi-Fi?",
        "Which hedge fund did Ignatius Fairweather start?",
        "When did the submarine Nautilus II sink?",
        "Who is the head chef of the Kyoto ramen bar?",
    ]
    for text in unanswerable[: max(3, int(10 * scale))]:
        q.append(Question("unanswerable", text))
    return q


def _current_employer(people: list[Person], name: str) -> str:
    person = next(p for p in people if p.name == name)
    return person.new_employer or person.employer
