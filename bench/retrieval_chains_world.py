"""The harder world of the retrieval-quality benchmark (`bench/retrieval_quality.py --world chains`):
chains of facts whose middle entities the question never names.

About 3,300 facts: ~470 people over 40 first names (a dozen people per first name, told apart
only by their surnames and roles), their employers, homes, birthplaces, schools, instruments and
languages; marriages, mentors; buildings designed by the architects among them, each in a city of
a country; companies with their headquarters, founders and products; job changes and moves a
year later (the old fact superseded). Each text comes with its scripted extraction, as in
bench/retrieval_world.py, whose records it shares.

The questions: direct, paraphrased and current-state ones (what the ranking must not lose), and
60 multi-hop ones, 30 of two hops (`multi_hop`) and 30 of three (`multi_hop_3`), such as "In which
city is the building that Alice Novak's spouse designed?": only the first entity of the chain is
named, the spouse and the building are not.

Everything is drawn from a seeded generator: the same world on every run.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

from retrieval_world import (
    CITIES,
    INDUSTRIES,
    INSTRUMENTS,
    LANGUAGES,
    LATER,
    ORG_WORDS,
    REFERENCE,
    SURNAMES,
    UNIVERSITIES,
    Fact,
    Person,
    Question,
    Text,
    World,
    article,
)

FIRSTS = """Alice Bob Carol David Emma Frank Grace Henry Irene Jack Karen Liam Maria Nora Oliver Paula
Quinn Rita Sam Tina Uma Victor Wendy Xavier Yvonne Zack Anna Ben Clara Dan Eva Felix Gina Hugo Ida
Jonas Kim Leo Mona Nils""".split()
PEOPLE_PER_FIRST = 12
ROLES = """architect nurse pilot translator chemist journalist baker librarian geologist photographer
pharmacist economist veterinarian cartographer sommelier electrician dentist actuary botanist
locksmith""".split()
BUILDING_KINDS = ["Museum", "Library", "Concert Hall", "Gallery", "Theatre", "Observatory", "Pavilion"]
BUILDING_WORDS = """Vesper Halden Marlow Quarry Lantern Aster Bramble Cinder Dunmore Elmstead Foxglove
Gilded Hollow Inkwell Juniper Kingfisher Larkspur Moorland Nettle Oriel Pebble Quayside Rookery
Saltmarsh Thistle Umber Verdant Willow Yarrow Zephyr""".split()
RELATIONS = ("married_to", "mentors", "designed")


def build_chains_world(seed: int = 29, scale: float = 1.0) -> World:
    """The world and its questions; `scale` < 1 makes a smaller one (the smoke run)."""
    rng = random.Random(seed)
    cities = list(CITIES)[: max(8, round(len(CITIES) * scale))]
    orgs = _organizations(rng, cities, scale)
    org_names = list(orgs)
    people = _people(rng, cities, org_names, scale)
    by_name = {person.name: person for person in people}
    founders = {org: rng.choice(people).name for org in org_names}
    spouses = _marriages(rng, people)
    mentors = _mentors(rng, people)
    buildings = _buildings(rng, people, cities, scale)
    movers = rng.sample(people, len(people) // 8)
    for index, person in enumerate(movers):
        if index % 2:
            person.new_city = rng.choice([c for c in cities if c != person.city])
        else:
            person.new_employer = rng.choice([o for o in org_names if o != person.employer])

    texts = [_city_text(city) for city in cities]
    texts += [_organization_text(rng, org, info, founders[org]) for org, info in orgs.items()]
    texts += [_profile_text(rng, person) for person in people]
    texts += [_marriage_text(rng, a, b) for a, b in spouses]
    texts += [_mentor_text(mentor, mentee) for mentee, mentor in mentors.items()]
    texts += [_building_text(rng, building, info) for building, info in buildings.items()]
    texts += [_change_text(rng, person) for person in movers]
    questions = _questions(rng, people, by_name, orgs, founders, spouses, mentors, buildings, scale)
    return World(texts, questions, people, orgs)


# --- the world -----------------------------------------------------------------------------------


def _organizations(rng: random.Random, cities: list[str], scale: float) -> dict[str, dict]:
    orgs: dict[str, dict] = {}
    words = ORG_WORDS[: max(6, round(len(ORG_WORDS) * scale))]
    for index, word in enumerate(words):
        industry, product = INDUSTRIES[index % len(INDUSTRIES)]
        orgs[f"{word} {industry.split()[0].capitalize()}"] = {
            "industry": industry,
            "product": f"{product} of {word}",
            "hq": rng.choice(cities),
        }
    return orgs


def _people(rng: random.Random, cities: list[str], org_names: list[str], scale: float) -> list[Person]:
    per_first = max(3, round(PEOPLE_PER_FIRST * scale))
    people: list[Person] = []
    for first in FIRSTS[: max(8, round(len(FIRSTS) * scale))]:
        # A first name's holders: distinct surnames and roles (a namesake is told apart by either).
        for surname, role in zip(rng.sample(SURNAMES, per_first), rng.sample(ROLES, per_first), strict=True):
            people.append(
                Person(
                    name=f"{first} {surname}",
                    first=first,
                    role=role,
                    employer=rng.choice(org_names),
                    city=rng.choice(cities),
                    born=rng.choice(cities),
                    university=rng.choice(UNIVERSITIES),
                    instrument=rng.choice(INSTRUMENTS),
                    language=rng.choice(LANGUAGES),
                )
            )
    return people


def _marriages(rng: random.Random, people: list[Person]) -> list[tuple[str, str]]:
    """Half of the people, in couples (each married once)."""
    married = rng.sample(people, len(people) // 2 // 2 * 2)
    return [(married[i].name, married[i + 1].name) for i in range(0, len(married), 2)]


def _mentors(rng: random.Random, people: list[Person]) -> dict[str, str]:
    """A third of the people have a mentor (mentee -> mentor), another person."""
    mentees = rng.sample(people, len(people) // 3)
    return {mentee.name: rng.choice([p for p in people if p.name != mentee.name]).name for mentee in mentees}


def _buildings(rng: random.Random, people: list[Person], cities: list[str], scale: float) -> dict:
    """Buildings, each designed by an architect of the world and standing in a city."""
    architects = [person.name for person in people if person.role == "architect"] or [people[0].name]
    buildings: dict[str, dict] = {}
    for word in BUILDING_WORDS[: max(6, round(len(BUILDING_WORDS) * scale))]:
        for kind in rng.sample(BUILDING_KINDS, 2):
            buildings[f"{word} {kind}"] = {
                "kind": kind.lower(),
                "city": rng.choice(cities),
                "architect": rng.choice(architects),
                "year": rng.randint(1995, 2020),
            }
    return buildings


def _city_text(city: str) -> Text:
    country = CITIES[city]
    return Text(
        f"{city} is a city in {country}.",
        REFERENCE,
        [
            {"name": city, "type": "city", "description": f"a city in {country}"},
            {"name": country, "type": "country", "description": "a country in Europe"},
        ],
        [Fact(city, "located_in", country, f"{city} is a city in {country}.")],
    )


def _organization_text(rng: random.Random, org: str, info: dict, founder: str) -> Text:
    founded = datetime(rng.randint(1990, 2015), 1, 1, tzinfo=UTC)
    return Text(
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
        [
            Fact(org, "headquartered_in", info["hq"], f"{org} is headquartered in {info['hq']}."),
            Fact(founder, "founded", org, f"{founder} founded {org} in {founded.year}.", founded),
            Fact(org, "makes", info["product"], f"{org} makes {info['product']}."),
        ],
    )


def _profile_text(rng: random.Random, person: Person) -> Text:
    since = datetime(rng.randint(2012, 2021), rng.randint(1, 12), 1, tzinfo=UTC)
    name, first = person.name, person.first
    return Text(
        f"{name} is {article(person.role)} {person.role}. Since {since.year}, {first} has worked at "
        f"{person.employer}. {first} lives in {person.city} and was born in {person.born}. "
        f"{first} studied at the {person.university}, plays the {person.instrument} and speaks "
        f"{person.language}.",
        REFERENCE,
        [
            {"name": name, "type": "person", "description": f"{article(person.role)} {person.role}"},
            {"name": person.employer, "type": "organization", "description": ""},
            {"name": person.city, "type": "city", "description": ""},
            {"name": person.born, "type": "city", "description": ""},
            {"name": person.university, "type": "organization", "description": "a university"},
            {"name": person.instrument, "type": "instrument", "description": "a musical instrument"},
            {"name": person.language, "type": "language", "description": "a language"},
        ],
        [
            Fact(name, "works_at", person.employer, f"{name} works at {person.employer}.", since),
            Fact(name, "lives_in", person.city, f"{name} lives in {person.city}."),
            Fact(name, "was_born_in", person.born, f"{name} was born in {person.born}."),
            Fact(name, "studied_at", person.university, f"{name} studied at the {person.university}."),
            Fact(name, "plays", person.instrument, f"{name} plays the {person.instrument}."),
            Fact(name, "speaks", person.language, f"{name} speaks {person.language}."),
        ],
    )


def _marriage_text(rng: random.Random, a: str, b: str) -> Text:
    year = rng.randint(2005, 2021)
    sentence = f"{a} is married to {b}."
    return Text(
        f"{a} and {b} got married in {year}.",
        REFERENCE,
        [{"name": a, "type": "person", "description": ""}, {"name": b, "type": "person", "description": ""}],
        [Fact(a, "married_to", b, sentence, datetime(year, 6, 1, tzinfo=UTC))],
    )


def _mentor_text(mentor: str, mentee: str) -> Text:
    return Text(
        f"{mentor} has been mentoring {mentee} for several years.",
        REFERENCE,
        [
            {"name": mentor, "type": "person", "description": ""},
            {"name": mentee, "type": "person", "description": ""},
        ],
        [Fact(mentor, "mentors", mentee, f"{mentor} mentors {mentee}.")],
    )


def _building_text(rng: random.Random, building: str, info: dict) -> Text:
    return Text(
        f"The {building}, which opened in {info['year']}, stands in {info['city']}. "
        f"It was designed by {info['architect']}.",
        REFERENCE,
        [
            {"name": building, "type": "building", "description": f"a {info['kind']}"},
            {"name": info["city"], "type": "city", "description": ""},
            {"name": info["architect"], "type": "person", "description": ""},
        ],
        [
            Fact(building, "located_in", info["city"], f"The {building} stands in {info['city']}."),
            Fact(info["architect"], "designed", building, f"{info['architect']} designed the {building}."),
        ],
    )


def _change_text(rng: random.Random, person: Person) -> Text:
    change = datetime(2024, rng.randint(1, 8), 1, tzinfo=UTC)
    if person.new_employer:
        return Text(
            f"In {change:%B %Y}, {person.name} left {person.employer} and joined {person.new_employer}.",
            LATER,
            [
                {"name": person.name, "type": "person", "description": ""},
                {"name": person.new_employer, "type": "organization", "description": ""},
            ],
            [
                Fact(
                    person.name,
                    "works_at",
                    person.new_employer,
                    f"{person.name} works at {person.new_employer}.",
                    change,
                )
            ],
        )
    return Text(
        f"{person.name} moved from {person.city} to {person.new_city} in {change:%B %Y}.",
        LATER,
        [
            {"name": person.name, "type": "person", "description": ""},
            {"name": person.new_city, "type": "city", "description": ""},
        ],
        [
            Fact(
                person.name, "lives_in", person.new_city, f"{person.name} lives in {person.new_city}.", change
            )
        ],
    )


# --- the questions -------------------------------------------------------------------------------


def _questions(rng, people, by_name, orgs, founders, spouses, mentors, buildings, scale) -> list[Question]:
    n = max(4, int(30 * scale))
    stayers = [p for p in people if not p.new_employer and not p.new_city]
    sample = rng.sample(stayers, 2 * n)
    q: list[Question] = []
    forms = [
        ("Where does {n} work?", "works_at", "employer"),
        ("Where does {n} live?", "lives_in", "city"),
        ("What instrument does {n} play?", "plays", "instrument"),
        ("Where was {n} born?", "was_born_in", "born"),
        ("Where did {n} study?", "studied_at", "university"),
        ("Which language does {n} speak?", "speaks", "language"),
    ]
    for i, person in enumerate(sample[:n]):
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
    ]
    for i, person in enumerate(sample[n : 2 * n]):
        text, relation, attribute = paraphrases[i % len(paraphrases)]
        q.append(
            Question(
                "paraphrased",
                text.format(n=person.name),
                [(person.name, relation, getattr(person, attribute))],
            )
        )
    for person in [p for p in people if p.new_employer][: n // 2]:
        q.append(
            Question(
                "current_state",
                f"Where does {person.name} work now?",
                [(person.name, "works_at", person.new_employer)],
            )
        )
    for person in [p for p in people if p.new_city][: n // 2]:
        q.append(
            Question(
                "current_state",
                f"Which city does {person.name} live in today?",
                [(person.name, "lives_in", person.new_city)],
            )
        )
    q += _two_hops(rng, people, by_name, orgs, founders, spouses, mentors, n)
    q += _three_hops(rng, people, by_name, orgs, founders, spouses, mentors, buildings, n)
    for text in ["Where does Zebulon Quartermaine work?", "Who designed the opera house of Atlantis?"]:
        q.append(Question("unanswerable", text))
    return q


def _spouse_fact(spouses: list[tuple[str, str]], name: str) -> tuple[str, tuple[str, str, str]]:
    """(the spouse of `name`, the married_to fact as stored)."""
    a, b = next(pair for pair in spouses if name in pair)
    return (b if a == name else a), (a, "married_to", b)


def _current(person: Person) -> tuple[str, str]:
    return person.new_employer or person.employer, person.new_city or person.city


def _two_hops(rng, people, by_name, orgs, founders, spouses, mentors, n) -> list[Question]:
    """Questions of two facts: the entity between them is never named."""
    married = [name for pair in spouses for name in pair]
    q: list[Question] = []
    for i in range(n):
        form = i % 4
        if form == 0:
            name = rng.choice(married)
            spouse, marriage = _spouse_fact(spouses, name)
            q.append(
                Question(
                    "multi_hop",
                    f"Where was the spouse of {name} born?",
                    [marriage, (spouse, "was_born_in", by_name[spouse].born)],
                )
            )
        elif form == 1:
            person = rng.choice([p for p in people if not p.new_employer])
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
        elif form == 2:
            mentee = rng.choice(list(mentors))
            mentor = mentors[mentee]
            q.append(
                Question(
                    "multi_hop",
                    f"Which instrument does the mentor of {mentee} play?",
                    [(mentor, "mentors", mentee), (mentor, "plays", by_name[mentor].instrument)],
                )
            )
        else:
            founder_of = {}
            for org, founder in founders.items():
                founder_of.setdefault(founder, org)
            founder = rng.choice(sorted(founder_of))
            org = founder_of[founder]
            q.append(
                Question(
                    "multi_hop",
                    f"What does the company founded by {founder} make?",
                    [(founder, "founded", org), (org, "makes", orgs[org]["product"])],
                )
            )
    return q


def _three_hops(rng, people, by_name, orgs, founders, spouses, mentors, buildings, n) -> list[Question]:
    """Questions of three facts: the two entities between them are never named."""
    designers = {info["architect"] for info in buildings.values()}
    married_designers = [
        name for pair in spouses for name in pair if _spouse_fact(spouses, name)[0] in designers
    ]
    married = [name for pair in spouses for name in pair]
    q: list[Question] = []
    for i in range(n):
        form = i % 4
        if form == 0 and married_designers:
            name = rng.choice(married_designers)
            spouse, marriage = _spouse_fact(spouses, name)
            building = rng.choice(sorted(b for b, info in buildings.items() if info["architect"] == spouse))
            q.append(
                Question(
                    "multi_hop_3",
                    f"In which city is the {buildings[building]['kind']} that the spouse of {name} designed?",
                    [
                        marriage,
                        (spouse, "designed", building),
                        (building, "located_in", buildings[building]["city"]),
                    ],
                )
            )
        elif form in (0, 1):
            name = rng.choice(married)
            spouse, marriage = _spouse_fact(spouses, name)
            born = by_name[spouse].born
            q.append(
                Question(
                    "multi_hop_3",
                    f"In which country was the spouse of {name} born?",
                    [marriage, (spouse, "was_born_in", born), (born, "located_in", CITIES[born])],
                )
            )
        elif form == 2:
            mentee = rng.choice(list(mentors))
            mentor = mentors[mentee]
            employer = _current(by_name[mentor])[0]
            q.append(
                Question(
                    "multi_hop_3",
                    f"In which city is the employer of {mentee}'s mentor headquartered?",
                    [
                        (mentor, "mentors", mentee),
                        (mentor, "works_at", employer),
                        (employer, "headquartered_in", orgs[employer]["hq"]),
                    ],
                )
            )
        else:
            person = rng.choice([p for p in people if not p.new_employer])
            founder = founders[person.employer]
            q.append(
                Question(
                    "multi_hop_3",
                    f"Where was the founder of the company {person.name} works for born?",
                    [
                        (person.name, "works_at", person.employer),
                        (founder, "founded", person.employer),
                        (founder, "was_born_in", by_name[founder].born),
                    ],
                )
            )
    return q
