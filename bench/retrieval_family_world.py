"""The family, health and travel world of the retrieval-quality benchmark
(`bench/retrieval_quality.py --world family`).

Written apart from the other worlds, with its own people, places, relation names and wording, so
that it tests whether retrieval generalises rather than whether it fits one world's phrasing.

The world (scale 1.0, seed 41): 30 three-generation families and 42 doctors (about 245
people) in 24 invented towns and 10 holiday destinations, spread over 9 regions of 3 invented
countries. About 570 texts of a few sentences (family notes, personal profiles, health notes,
trip reports, clinic and hotel descriptions, and later news of changes) carry about 2,450 scripted
facts. Twelve first names are shared by 10 to 12 people each, told apart only by surname and
what they do. Hubs: Kaliwa (the big town), Kaliwa General Hospital, Coralhaven (the favourite
destination) and Sunbird Airways. Changes, told a year after the profiles: households move
(`resides_in`), patients change doctor (`patient_of`), medications are switched
(`takes_medication`), doctors move practice (`practises_at`); each supersedes the old fact.

Questions (at scale 1.0; at least 4 of each at any scale):
- direct (20): one fact, asked in the relation's own words, the person named in full.
- paraphrased (15): one fact, asked in other words ("What line of work is ... in?").
- current_state (15): a relation that changed; the gold is the new fact only.
- namesake (10): a shared first name plus one distinguishing attribute in other words; gold:
  the distinguishing fact and the fact asked.
- multi_hop (30): two hops, the middle unnamed ("Where does X's sister live?").
- multi_hop_3 (30): three hops, both middles unnamed ("Which country is X's hometown in?").
- paraphrased_role (30): an occupation, condition, allergen or breed named by paraphrase only
  ("the Amara who looks after children's teeth", "high blood pressure").
- unanswerable (5): things the world does not hold; no gold.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from retrieval_world import Fact, Question, Text, World

# --- vocabulary ---------------------------------------------------------------------------------

REGIONS = (  # (region, country), interleaved so that a small world still has every country
    ("Kestrel Coast", "Naravia"),
    ("Highveld Uplands", "Kaluma"),
    ("Southern Atolls", "Tessaly Isles"),
    ("Umbali Province", "Naravia"),
    ("Mirren Province", "Kaluma"),
    ("Windward Cays", "Tessaly Isles"),
    ("Redgum Valley", "Naravia"),
    ("Olunde Lakelands", "Kaluma"),
    ("Ambrin Peninsula", "Tessaly Isles"),
)
HOME_TOWNS = """Kaliwa|Tembeka|Saltreach|Korumba|Nandoro|Waimaru|Silverkop|Rivenhallow|Okonjo Springs|
Mirabel Heights|Duneholm|Ashgrove Flats|Lantana Ridge|Temaru|Velasca|Gumtree Crossing|Oruza|Kaimana|
Zarafa|Thornwell|Bellbird Creek|Marula Bend|Quenby|Sabi Ridge""".replace("\n", "").split("|")
DESTINATIONS = """Coralhaven|Isla Verdante|Mount Keshet|Lake Olunde|Sandfire Dunes|Jade Lagoon|
Pinecrest Hot Springs|Azure Point|Baobab Reach|Cloudmere""".replace("\n", "").split("|")
BIG_TOWN, BIG_HOSPITAL, FAVOURITE_DESTINATION, BIG_AIRLINE = (
    "Kaliwa",
    "Kaliwa General Hospital",
    "Coralhaven",
    "Sunbird Airways",
)
HOSPITALS = [BIG_HOSPITAL, "Sunrise Memorial Hospital", "Bayview District Hospital"]
CLINICS = """Bluegum Medical Practice|Harbourside Clinic|Jacaranda Health Centre|Riverbend Surgery|
Acacia Family Practice|Frangipani Clinic|Ironwood Medical Rooms|Wattle Street Practice|
Sunhill Health Centre|Kingfisher Clinic|Marula Medical Centre|Tamarind Clinic|Lotus Gate Practice|
Seabreeze Surgery""".replace("\n", "").split("|")
HOTELS = """Hotel Marisol|The Coral Crown|Lagoon House|Palm Shade Inn|Amber Lodge|Summit View Hotel|
Desert Rose Camp|Saltwind Beach Resort|Cedar Spa Hotel|Bluewater Suites|Thornveld Safari Lodge|
Mistral Manor|Shoreline Hotel|Stillwater Villas|Seashell Cottages|Reef Garden Hotel|
Moonbay Resort|The Driftwood|Tidewell House|Hibiscus Court""".replace("\n", "").split("|")
HOTEL_CHAINS = ["Azul Collection", "Horizon Stays", "Mango Leaf Hotels", "Kestrel Inns"]
AIRLINES = [BIG_AIRLINE, "Kaluma Air", "Tessaly Wings", "Naravia Express", "Blue Heron Jet"]

# condition: (medications, the specialist it is referred to, paraphrases that avoid its words)
CONDITIONS = {
    "asthma": (["salbutamol", "budesonide"], "pulmonologist", ["a wheezy chest that needs an inhaler"]),
    "type 2 diabetes": (["metformin", "sitagliptin"], "endocrinologist", ["high blood sugar"]),
    "hypertension": (["amlodipine", "lisinopril"], "cardiologist", ["high blood pressure"]),
    "high cholesterol": (["atorvastatin", "rosuvastatin"], "cardiologist", ["too many lipids in the blood"]),
    "migraine": (["sumatriptan", "rizatriptan"], "neurologist", ["blinding headaches that keep coming back"]),
    "epilepsy": (["lamotrigine", "levetiracetam"], "neurologist", ["seizures"]),
    "eczema": (
        ["hydrocortisone cream", "tacrolimus ointment"],
        "dermatologist",
        ["dry, itchy, inflamed skin"],
    ),
    "rheumatoid arthritis": (
        ["methotrexate", "hydroxychloroquine"],
        "rheumatologist",
        ["swollen, painful joints"],
    ),
    "acid reflux": (["omeprazole", "famotidine"], "gastroenterologist", ["heartburn"]),
    "hypothyroidism": (["levothyroxine"], "endocrinologist", ["a sluggish gland in the neck"]),
    "insomnia": (["zolpidem"], "", ["sleepless nights"]),
    "depression": (["sertraline", "fluoxetine"], "psychiatrist", ["a low mood that will not lift"]),
}
CHILD_CONDITIONS = ["asthma", "eczema", "epilepsy"]
SPECIALTIES = {  # the doctors' occupations, with paraphrases that avoid their words
    "general practitioner": "family doctor",
    "pediatrician": "children's doctor",
    "cardiologist": "heart specialist",
    "endocrinologist": "hormone specialist",
    "neurologist": "brain and nerve specialist",
    "dermatologist": "skin doctor",
    "rheumatologist": "joint specialist",
    "gastroenterologist": "stomach and gut specialist",
    "pulmonologist": "lung specialist",
    "psychiatrist": "mental health doctor",
    "allergist": "specialist in bad reactions to foods and pollen",
}
SPECIALISTS = [s for s in SPECIALTIES if s not in ("general practitioner", "pediatrician")]
BUSY_SPECIALTIES = ("cardiologist", "neurologist", "endocrinologist")
OCCUPATIONS = {  # occupation: what the person does, in words that avoid it
    "pharmacist": "dispenses prescriptions at a chemist's",
    "midwife": "helps deliver babies",
    "pediatric dentist": "looks after children's teeth",
    "veterinarian": "treats sick animals",
    "airline pilot": "flies passenger jets",
    "flight attendant": "works as cabin crew",
    "physiotherapist": "helps people regain movement after an injury",
    "optometrist": "tests eyesight and fits glasses",
    "schoolteacher": "educates pupils in a classroom",
    "carpenter": "builds furniture out of wood",
    "plumber": "fixes leaking pipes and drains",
    "electrician": "does the wiring in houses",
    "beekeeper": "tends hives for honey",
    "tour guide": "shows visitors the sights",
    "chef": "cooks in a restaurant kitchen",
    "accountant": "does people's tax returns",
    "architect": "draws up plans for buildings",
    "firefighter": "puts out blazes",
    "journalist": "reports the news for a paper",
    "librarian": "lends out books in the public reading room",
    "florist": "sells bouquets",
    "baker": "makes loaves and pastries every morning",
    "fisherman": "goes out on a trawler",
    "translator": "renders documents from one language into another",
    "software developer": "writes code for apps",
    "nurse": "cares for patients on a hospital ward",
    "paramedic": "rides out in the ambulance to emergencies",
    "radiographer": "takes X-rays",
    "hairdresser": "runs a salon cutting and styling clients' locks",
    "tailor": "alters and sews clothes",
    "potter": "throws clay on a wheel",
    "surveyor": "measures land for building plots",
}
ALLERGENS = {
    "penicillin": "the antibiotic Alexander Fleming discovered",
    "peanuts": "groundnuts",
    "shellfish": "prawns, crab and lobster",
    "latex": "rubber gloves",
    "cat dander": "felines",
    "grass pollen": "hay fever season",
    "sesame": "tahini",
    "insect stings": "wasps and bees",
    "dust mites": "tiny bugs living in bedding",
    "ibuprofen": "anti-inflammatory painkillers like Advil",
}
BREEDS = {
    "beagle": "small floppy-eared scent hound",
    "dachshund": "sausage dog",
    "border collie": "sheepdog",
    "greyhound": "retired racing dog",
    "siamese cat": "slim blue-eyed Thai feline",
    "maine coon": "huge long-haired feline",
    "african grey parrot": "talking bird from the Congo",
    "leopard tortoise": "slow shelled reptile",
    "lop rabbit": "bunny with drooping ears",
    "corn snake": "pet serpent",
    "budgerigar": "little Australian parakeet",
    "guinea pig": "cavy",
}
PET_NAMES = """Pocket Clover Mango Biko Zuri Tofu Paprika Sprocket Juniper Cinders Waffles Nugget Pippin
Kiwi Saffron Rolo Bramble Dumpling Figaro Gizmo Jellybean Kumquat Lentil Maple Nacho Olive Pumpkin
Quill Rusty Sushi Truffle Umber Velvet Wasabi Yoyo Acorn Bonbon Cashew Doodle Ember Fennel Gumdrop
Hopscotch Inky Jasper Kipper Licorice Muffin Nutmeg Oreo Quokka Radish Sorbet Tinker Uzo Vanilla
Whiskey Yam Zest Anchovy Beetle Cocoa Echo Flapjack Ginger Hazelnut Igloo Jigsaw Kettle Lolly
Marzipan Opal Pretzel Quince Rocket Scout Toffee Ukulele Vesper Wombat Yeti Zigzag Apricot Chutney
Domino Espresso Fudge Guava Hickory Indigo Jambo Koko Lychee Mopsy Onyx Papaya Rumba Tango Sultan
Bingo Cricket Falafel Haiku Jinx Kazoo Lupin Nori Pesto Ripple Snickers Teacup""".split()
NAMESAKES = {"f": ["Amara", "Priya", "Mei", "Leilani", "Nadia", "Ayesha"],
             "m": ["Kofi", "Ravi", "Hiroshi", "Tariq", "Joaquin", "Emeka"]}  # fmt: skip
FIRST_NAMES = {
    "f": """Adaeze Aiko Akosua Alejandra Amani Anaya Asha Ayumi Chiamaka Dalia Deepa Esi Farah Fatima
Folake Hana Imani Ines Isabela Jamila Kalani Kemi Keiko Lakshmi Lerato Lina Luana Mahina Malia Mariam
Naledi Nalani Ngozi Nia Noor Nomvula Oluchi Paloma Rania Rashida Sakura Salma Sana Sefa Shirin
Thandiwe Uzma Valentina Wanjiru Xiadani Yara Yasmin Yuki Zainab Zodwa Abena Adwoa Anjali Bisi Catalina
Chinwe Divya Efua Habiba Ife Kavya Makena Mirembe Nkechi Pooja Rukmini Sadia Ximena Yetunde Zawadi
Aroha Kiri Mele Tiponi Ayasha Chenoa Dyani Halona Kimi Nayeli Sitara Tallulah Winona""".split(),
    "m": """Adebayo Ahmed Akira Alejandro Amadou Anand Arjun Babajide Chidi Chinedu Daisuke Diego Femi
Gaurav Haruto Ibrahim Ikaika Jabari Jomo Kaito Kamau Kenji Kwame Lwazi Mandla Mateo Musa Nnamdi Obinna
Omar Rahul Rangi Rashid Sandeep Santiago Sefu Sione Sipho Tane Tendai Themba Uche Vikram Wiremu
Xolani Yaw Yusuf Zaid Zola Abdou Bongani Dumisani Ekow Farid Gyasi Hamza Idris Jelani Kojo Mosi
Nikhil Olumide Pita Rafael Ren Sami Takeshi Thabo Vusi Wale Yoshi Zuberi Amit Bilal Desta Kai Ashkii
Chayton Dakota Hakan Koda Mato Nodin Tokala Enapay Haloke Kele Sani""".split(),
}
FAMILY_SURNAMES = """Adeyemi Okafor Mensah Nakamura Mokoena Dlamini Castellanos Fofana Kariuki Haddad
Qureshi Banerjee Tanaka Oyelaran Kamakau Wanyama Iyer Obeng Matsuda Salazar Ramaswamy Nkosi Kealoha
Otieno Balogun Chaudhry Villanueva Ekwueme Hirano Mahlangu Sandoval Rahimi Tuilagi Acheampong
Montoya Okonkwo Sithole Yamaguchi""".split()
OTHER_SURNAMES = """Achebe Baptiste Duarte Gathii Hakimi Jaramillo Khumalo Lindo Mwangi Nwosu Ogunleye
Pillai Quispe Rosales Sato Takahashi Umeh Vargas Watanabe Xaba Yamamoto Zulu Agarwal Bello Cabrera
Diallo Eze Fernando Gupta Hoshino Ibe Jaffer Kaur Luna Maalouf Ndlovu Okoro Pereira Rahman Saini
Toure Uchida Valdez Wekesa Yilmaz Zaman Akande Bhatt Coulibaly Delgado""".split()
MONTHS = "January February March April May June July August September October November December".split()

PLACES_FROM = datetime(2022, 11, 1, tzinfo=UTC)  # towns, clinics, hotels are described first
PROFILES_FROM = datetime(2023, 1, 9, tzinfo=UTC)  # then people, families and health notes
TRIPS_FROM = datetime(2023, 7, 1, tzinfo=UTC)  # then the summer's trips
CHANGES_FROM = datetime(2024, 3, 1, tzinfo=UTC)  # then moves, new doctors, switched medication
FUNCTIONAL = frozenset({"resides_in", "patient_of", "takes_medication", "practises_at"})


def with_article(word: str) -> str:
    return ("an " if word[0].lower() in "aeiou" else "a ") + word


def listing(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def month_year(moment: datetime) -> str:
    return f"{MONTHS[moment.month - 1]} {moment.year}"


# --- the people ---------------------------------------------------------------------------------


@dataclass(eq=False)
class Person:
    kind: str  # elder, adult (born into a family), inlaw (married into one), child, doctor
    gender: str  # "f" or "m"
    surname: str
    first: str = ""
    occupation: str = ""
    home: str = ""
    hometown: str = ""
    workplace: str = ""  # a doctor's clinic or hospital
    doctor: Person | None = None
    condition: str = ""
    medication: str = ""
    specialist: Person | None = None
    allergy: str = ""
    hospital: str = ""
    school: str = ""
    pet: tuple[str, str] | None = None  # (name, breed)
    spouse: Person | None = None
    spouse_fact: tuple[str, str, str] | None = None
    parents: list[Person] = field(default_factory=list)
    children: list[Person] = field(default_factory=list)
    sibling_facts: dict[Person, tuple[str, str, str]] = field(default_factory=dict)
    trips: list[Trip] = field(default_factory=list)
    # the changes, told later
    new_home: str = ""
    new_doctor: Person | None = None
    new_medication: str = ""
    new_workplace: str = ""

    @property
    def name(self) -> str:
        return f"{self.first} {self.surname}"

    @property
    def home_now(self) -> str:
        return self.new_home or self.home

    @property
    def doctor_now(self) -> Person | None:
        return self.new_doctor or self.doctor

    @property
    def medication_now(self) -> str:
        return self.new_medication or self.medication

    @property
    def workplace_now(self) -> str:
        return self.new_workplace or self.workplace


@dataclass(eq=False)
class Trip:
    kind: str  # honeymoon, anniversary, family, solo
    travellers: list[Person]
    destination: str
    hotel: str
    airline: str
    when: datetime


@dataclass(eq=False)
class Household:
    members: list[Person]


def pronouns(person: Person) -> dict[str, str]:
    she = person.gender == "f"
    words = {"he": "she" if she else "he", "his": "her" if she else "his", "him": "her" if she else "him"}
    return {**words, **{k.capitalize(): v.capitalize() for k, v in words.items()}}


def fill(template: str, person: Person, **values: str) -> str:
    return template.format(N=person.name, F=person.first, **pronouns(person), **values)


def kinship(person: Person, female: str, male: str) -> str:
    return female if person.gender == "f" else male


# --- one text being written ---------------------------------------------------------------------


class Draft:
    """The sentences of one text and the extraction a model would reply for it."""

    def __init__(self, world: FamilyWorld, when: datetime | None = None):
        self.world = world
        self.when = when
        self.sentences: list[str] = []
        self.facts: list[Fact] = []

    def say(self, sentence: str) -> None:
        self.sentences.append(sentence)

    def fact(self, source: str, relation: str, target: str, valid_at: datetime | None = None) -> None:
        sentence = self.world.fact_sentence(source, relation, target)
        self.facts.append(Fact(source, relation, target, sentence, valid_at))

    def text(self) -> Text:
        names = list(dict.fromkeys(n for f in self.facts for n in (f.source, f.target)))
        entities = [self.world.entity(name, self.facts) for name in names]
        return Text(" ".join(self.sentences), self.when, entities, self.facts)


FACT_SENTENCES = {
    "has_occupation": "{s} works as {a_t}.",
    "resides_in": "{s} lives in {t}.",
    "grew_up_in": "{s} grew up in {t}.",
    "patient_of": "{s} is a patient of Dr. {t}.",
    "diagnosed_with": "{s} has been diagnosed with {t}.",
    "takes_medication": "{s} takes {t}.",
    "allergic_to": "{s} is allergic to {t}.",
    "owns_pet": "{s} owns a pet named {t}.",
    "of_breed": "{s} is {a_t}.",
    "treated_at": "{s} was treated at {t}.",
    "referred_to": "{s} was referred to Dr. {t}.",
    "pupil_at": "{s} is a pupil at {t}.",
    "spouse_of": "{s} is married to {t}.",
    "holidayed_in": "{s} went on holiday to {t}.",
    "flew_with": "{s} flew with {t}.",
    "stayed_at": "{s} stayed at {t}.",
    "practises_at": "Dr. {s} practises at {t}.",
    "situated_in": "{s} is in {t}.",
    "part_of_region": "{s} is a town in {t}.",
    "belongs_to_country": "{s} is a region of {t}.",
    "belongs_to_chain": "{s} is part of {t}.",
    "flies_out_of": "{s} flies out of {t}.",
    "prescribed_for": "{s} is prescribed for {t}.",
}


# --- the world ----------------------------------------------------------------------------------


class FamilyWorld:
    """Builds the people, places and texts; `FamilyQuestions` then asks about them."""

    def __init__(self, seed: int, scale: float):
        self.rng = random.Random(seed)
        self.scale = scale
        self.people: list[Person] = []
        self.by_name: dict[str, Person] = {}
        self.entity_kinds: dict[str, tuple[str, str]] = {}  # name -> (type, description)
        self.households: list[Household] = []
        self.families: list[list[Person]] = []  # elders first, then their two children
        self.trips: list[Trip] = []
        self.texts: list[Text] = []

    def count(self, full: int, least: int) -> int:
        return max(least, round(full * self.scale))

    def kind(self, name: str, entity_type: str, description: str = "") -> str:
        self.entity_kinds.setdefault(name, (entity_type, description))
        return name

    def entity(self, name: str, facts: list[Fact]) -> dict:
        """As an extraction model would give it: a person's occupation only where the text says it."""
        if name in self.by_name:
            said = any(f.source == name and f.relation == "has_occupation" for f in facts)
            return {
                "name": name,
                "type": "person",
                "description": self.by_name[name].occupation if said else "",
            }
        entity_type, description = self.entity_kinds[name]
        return {"name": name, "type": entity_type, "description": description}

    def fact_sentence(self, source: str, relation: str, target: str) -> str:
        if relation == "parent_of":
            return f"{source} is the {kinship(self.by_name[source], 'mother', 'father')} of {target}."
        if relation == "sibling_of":
            return f"{source} is the {kinship(self.by_name[source], 'sister', 'brother')} of {target}."
        return FACT_SENTENCES[relation].format(s=source, t=target, a_t=with_article(target))

    def build(self) -> None:
        self.build_places()
        self.build_doctors()
        for surname in FAMILY_SURNAMES[: self.count(30, 3)]:
            self.build_family(surname)
        self.name_everyone()
        for person in self.people:
            self.give_health(person)
        self.plan_trips()
        self.plan_changes()
        self.write_texts()

    # --- places ---

    def build_places(self) -> None:
        regions = REGIONS[: self.count(9, 3)]
        self.region_country = dict(regions)
        self.home_towns = HOME_TOWNS[: self.count(24, 6)]
        self.destinations = DESTINATIONS[: self.count(10, 3)]
        self.town_region = {}
        for i, town in enumerate(self.home_towns + self.destinations):
            region = regions[i][0] if i < len(regions) else self.rng.choice(regions)[0]
            resort = "holiday resort" if town in self.destinations else ""
            self.town_region[self.kind(town, "town", resort)] = self.kind(region, "region")
        for country in self.region_country.values():
            self.kind(country, "country")
        self.build_facilities()

    def build_facilities(self) -> None:
        others = self.home_towns[1:]
        hospitals = HOSPITALS[: self.count(3, 2)]
        self.hospital_town = {
            h: BIG_TOWN if i == 0 else self.rng.choice(others) for i, h in enumerate(hospitals)
        }
        clinics = CLINICS[: self.count(14, 3)]
        self.clinic_town = {c: BIG_TOWN if i < 2 else self.rng.choice(others) for i, c in enumerate(clinics)}
        school_towns = [BIG_TOWN, *self.rng.sample(others, min(len(others), self.count(10, 2) - 1))]
        self.school_town = {f"{town} Primary School": town for town in school_towns}
        for name in hospitals:
            self.kind(name, "hospital", "hospital")
        for name in clinics:
            self.kind(name, "clinic", "medical practice")
        for name in self.school_town:
            self.kind(name, "school", "primary school")
        self.build_hotels()
        airlines = AIRLINES[: self.count(5, 3)]
        self.airline_base = {
            a: BIG_TOWN if i == 0 else self.rng.choice(others) for i, a in enumerate(airlines)
        }
        for name in airlines:
            self.kind(name, "airline", "airline")

    def build_hotels(self) -> None:
        names = iter(HOTELS)
        chains = HOTEL_CHAINS[: self.count(4, 2)]
        self.hotel_town, self.hotel_chain = {}, {}
        for i, destination in enumerate(self.destinations):
            for _ in range(self.count(4, 2) if i == 0 else self.rng.choice((1, 2))):
                hotel = self.kind(next(names), "hotel", "hotel")
                self.hotel_town[hotel] = destination
                self.hotel_chain[hotel] = self.kind(self.rng.choice(chains), "hotel chain", "hotel group")
        for medication_list, _, _ in CONDITIONS.values():
            for medication in medication_list:
                self.kind(medication, "medication")
        for condition in CONDITIONS:
            self.kind(condition, "medical condition")
        for allergen in ALLERGENS:
            self.kind(allergen, "allergen")
        for breed in BREEDS:
            self.kind(breed, "animal breed")

    def workplaces(self) -> dict[str, str]:
        return {**self.clinic_town, **self.hospital_town}

    # --- people ---

    def person(self, kind: str, gender: str, surname: str) -> Person:
        person = Person(kind, gender, surname)
        if kind != "child":
            person.occupation = self.rng.choice(list(OCCUPATIONS))
            person.hometown = self.pick_town(0.3)
        self.people.append(person)
        return person

    def pick_town(self, big_town_share: float) -> str:
        if self.rng.random() < big_town_share:
            return BIG_TOWN
        return self.rng.choice(self.home_towns[1:])

    def build_doctors(self) -> None:
        for i, clinic in enumerate(self.clinic_town):
            for _ in range(2 if i == 0 else self.rng.choice((1, 2))):
                self.add_doctor("general practitioner", clinic)
            if i % 2 == 0:
                self.add_doctor("pediatrician", clinic)
        for specialty in SPECIALISTS:
            for _ in range(2 if specialty in BUSY_SPECIALTIES and self.scale >= 0.5 else 1):
                self.add_doctor(specialty, self.specialist_workplace())

    def specialist_workplace(self) -> str:
        roll = self.rng.random()
        if roll < 0.5:
            return BIG_HOSPITAL
        if roll < 0.75:
            return self.rng.choice(list(self.hospital_town))
        return self.rng.choice(list(self.clinic_town))

    def add_doctor(self, specialty: str, workplace: str) -> Person:
        doctor = self.person("doctor", self.rng.choice("fm"), self.rng.choice(OTHER_SURNAMES))
        doctor.occupation = self.kind(specialty, "occupation")
        doctor.workplace = workplace
        doctor.home = self.workplaces()[workplace] if self.rng.random() < 0.6 else self.pick_town(0.3)
        return doctor

    def build_family(self, surname: str) -> None:
        grandfather, grandmother = self.person("elder", "m", surname), self.person("elder", "f", surname)
        self.marry(grandfather, grandmother)
        self.settle([grandfather, grandmother], self.pick_town(0.55))
        children = [self.person("adult", self.rng.choice("fm"), surname) for _ in range(2)]
        for child in children:
            self.adopt([grandfather, grandmother], child)
            if self.rng.random() < 0.7:
                child.hometown = grandfather.home
        self.make_siblings(*children)
        self.families.append([grandfather, grandmother, *children])
        self.start_household(children[0], spouse_chance=0.85, most_children=2)
        self.start_household(children[1], spouse_chance=0.45, most_children=1)

    def start_household(self, adult: Person, spouse_chance: float, most_children: int) -> None:
        members = [adult]
        if self.rng.random() < spouse_chance:
            spouse = self.person(
                "inlaw", "m" if adult.gender == "f" else "f", self.rng.choice(OTHER_SURNAMES)
            )
            self.marry(adult, spouse)
            members.append(spouse)
            if self.rng.random() < 0.75:
                how_many = self.rng.randint(1, most_children)
                kids = [self.person("child", self.rng.choice("fm"), adult.surname) for _ in range(how_many)]
                for kid in kids:
                    self.adopt([adult, spouse], kid)
                if len(kids) == 2:
                    self.make_siblings(*kids)
                members += kids
        self.settle(members, self.pick_town(0.55))

    def settle(self, members: list[Person], town: str) -> None:
        for member in members:
            member.home = town
        self.households.append(Household(members))

    def marry(self, first: Person, second: Person) -> None:
        first.spouse, second.spouse = second, first
        first.spouse_fact = second.spouse_fact = (first, second)  # names are given later

    def adopt(self, parents: list[Person], child: Person) -> None:
        child.parents = list(parents)
        for parent in parents:
            parent.children.append(child)

    def make_siblings(self, first: Person, second: Person) -> None:
        first.sibling_facts[second] = second.sibling_facts[first] = (first, second)

    def name_everyone(self) -> None:
        taken: set[str] = set()
        for gender in "fm":
            people = [p for p in self.people if p.gender == gender]
            self.rng.shuffle(people)
            pool = self.first_name_pool(gender, len(people))
            for person in people:
                person.first = next(n for n in pool if f"{n} {person.surname}" not in taken)
                pool.remove(person.first)
                taken.add(person.name)
                self.by_name[person.name] = person
        for person in self.people:  # the relational facts, now that everyone has a name
            if person.spouse_fact:
                person.spouse_fact = self.pair_fact(person.spouse_fact, "spouse_of")
            person.sibling_facts = {
                o: self.pair_fact(f, "sibling_of") for o, f in person.sibling_facts.items()
            }

    def pair_fact(self, pair, relation: str) -> tuple[str, str, str]:
        return pair if isinstance(pair[0], str) else (pair[0].name, relation, pair[1].name)

    def first_name_pool(self, gender: str, size: int) -> list[str]:
        """Each shared first name 10-12 times (fewer in a small world), then names used once: the
        shared ones first in the pool, so all their copies are given (the people come shuffled)."""
        shared = NAMESAKES[gender][: self.count(6, 2)]
        copies = [name for name in shared for _ in range(self.count(self.rng.randint(10, 12), 3))]
        self.rng.shuffle(copies)
        return copies[:size] + FIRST_NAMES[gender][: max(0, size - len(copies)) + 10]

    # --- health, trips, changes ---

    def give_health(self, person: Person) -> None:
        if person.kind == "doctor":
            return
        child = person.kind == "child"
        person.doctor = self.local_doctor("pediatrician" if child else "general practitioner", person.home)
        chance = {"child": 0.25, "elder": 0.65}.get(person.kind, 0.4)
        if self.rng.random() < chance:
            person.condition = self.rng.choice(CHILD_CONDITIONS if child else list(CONDITIONS))
            medications, specialty, _ = CONDITIONS[person.condition]
            person.medication = self.rng.choice(medications)
            if specialty and self.rng.random() < 0.6:
                person.specialist = self.rng.choice(self.doctors_of(specialty))
        if self.rng.random() < (0.4 if child else 0.33):
            person.allergy = self.rng.choice(list(ALLERGENS))
            if not child and not person.specialist and self.rng.random() < 0.3:
                person.specialist = self.rng.choice(self.doctors_of("allergist"))
        if self.rng.random() < (0.3 if child else 0.6):
            person.hospital = (
                BIG_HOSPITAL if self.rng.random() < 0.8 else self.rng.choice(list(self.hospital_town))
            )
        if self.rng.random() < (0.35 if child else 0.3):
            person.pet = (self.new_pet_name(), self.rng.choice(list(BREEDS)))
        if child:
            here = [s for s, town in self.school_town.items() if town == person.home]
            person.school = here[0] if here else self.rng.choice(list(self.school_town))

    def doctors_of(self, specialty: str) -> list[Person]:
        return [p for p in self.people if p.kind == "doctor" and p.occupation == specialty]

    def local_doctor(self, specialty: str, town: str) -> Person:
        doctors = self.doctors_of(specialty)
        local = [d for d in doctors if self.workplaces()[d.workplace] == town]
        return self.rng.choice(local if local and self.rng.random() < 0.8 else doctors)

    def new_pet_name(self) -> str:
        taken = {p.pet[0] for p in self.people if p.pet}
        name = self.rng.choice([n for n in PET_NAMES if n not in taken])
        return self.kind(name, "pet")

    def plan_trips(self) -> None:
        for household in self.households:
            adults = [m for m in household.members if m.kind != "child"]
            kids = [m for m in household.members if m.kind == "child"]
            if adults[0].kind == "elder":
                self.maybe_trip(0.6, "anniversary", adults)
            elif kids:
                self.maybe_trip(0.7, "family", adults + kids)
            elif len(adults) == 2:
                self.maybe_trip(0.75, "honeymoon", adults)
            else:
                self.maybe_trip(0.55, "solo", adults)
        for person in self.people:
            if person.kind in ("adult", "inlaw", "doctor"):
                self.maybe_trip(0.1 if person.kind != "doctor" else 0.3, "solo", [person])

    def maybe_trip(self, chance: float, kind: str, travellers: list[Person]) -> None:
        if self.rng.random() >= chance:
            return
        destination = FAVOURITE_DESTINATION if self.rng.random() < 0.4 else self.rng.choice(self.destinations)
        hotel = self.rng.choice([h for h, town in self.hotel_town.items() if town == destination])
        airline = BIG_AIRLINE if self.rng.random() < 0.45 else self.rng.choice(list(self.airline_base))
        when = TRIPS_FROM + timedelta(days=self.rng.randint(0, 120))
        trip = Trip(kind, travellers, destination, hotel, airline, when)
        self.trips.append(trip)
        for traveller in travellers:
            traveller.trips.append(trip)

    def plan_changes(self) -> None:
        """Moves, new doctors, switched medication and doctors changing practice, each on a date."""
        self.changes: list[tuple[str, object]] = []
        for household in self.rng.sample(self.households, self.count(16, 3)):
            old = household.members[0].home
            new = self.rng.choice([t for t in self.home_towns if t != old])
            for member in household.members:
                member.new_home = new
            self.changes.append(("move", household))
        patients = [p for p in self.people if p.kind in ("adult", "inlaw", "elder")]
        for person in self.rng.sample(patients, self.count(20, 3)):
            others = [d for d in self.doctors_of("general practitioner") if d is not person.doctor]
            person.new_doctor = self.local_doctor_among(others, person.home_now)
            self.changes.append(("doctor", person))
        switchable = [p for p in patients if p.condition and len(CONDITIONS[p.condition][0]) > 1]
        for person in self.rng.sample(switchable, min(len(switchable), self.count(14, 3))):
            person.new_medication = next(m for m in CONDITIONS[person.condition][0] if m != person.medication)
            self.changes.append(("medication", person))
        for doctor in self.rng.sample(self.doctors_of("general practitioner"), self.count(5, 1)):
            doctor.new_workplace = self.rng.choice([c for c in self.clinic_town if c != doctor.workplace])
            self.changes.append(("practice", doctor))
        self.rng.shuffle(self.changes)

    def local_doctor_among(self, doctors: list[Person], town: str) -> Person:
        local = [d for d in doctors if self.workplaces()[d.workplace] == town]
        return self.rng.choice(local or doctors)

    # --- texts ---

    def write_texts(self) -> None:
        writer = TextWriter(self)
        places = writer.place_drafts()
        profiles = writer.profile_drafts()
        self.rng.shuffle(profiles)
        for i, draft in enumerate(places):
            draft.when = PLACES_FROM + timedelta(hours=6 * i)
        for i, draft in enumerate(profiles):
            draft.when = PROFILES_FROM + timedelta(hours=7 * i)
        trips = [writer.trip_draft(trip) for trip in self.trips]
        changes = [writer.change_draft(kind, subject, i) for i, (kind, subject) in enumerate(self.changes)]
        self.texts = [draft.text() for draft in places + profiles + trips + changes]


class TextWriter:
    """The prose of each text, with its scripted facts."""

    def __init__(self, world: FamilyWorld):
        self.world = world
        self.rng = world.rng

    def draft(self, when: datetime | None = None) -> Draft:
        return Draft(self.world, when)

    # --- places ---

    def place_drafts(self) -> list[Draft]:
        world = self.world
        drafts = [self.region_draft(region, country) for region, country in world.region_country.items()]
        drafts += [self.facility_draft(name, town, CLINIC_LINES) for name, town in world.clinic_town.items()]
        drafts += [
            self.facility_draft(name, town, HOSPITAL_LINES) for name, town in world.hospital_town.items()
        ]
        drafts += [self.facility_draft(name, town, SCHOOL_LINES) for name, town in world.school_town.items()]
        drafts += [self.chain_draft(chain) for chain in sorted(set(world.hotel_chain.values()))]
        drafts += [self.airline_draft(airline, town) for airline, town in world.airline_base.items()]
        drafts += [self.medication_draft(condition) for condition in CONDITIONS]
        return drafts

    def region_draft(self, region: str, country: str) -> Draft:
        towns = [t for t, r in self.world.town_region.items() if r == region]
        draft = self.draft()
        draft.say(self.rng.choice(REGION_LINES).format(region=region, country=country))
        draft.fact(region, "belongs_to_country", country)
        if towns:
            draft.say(self.rng.choice(REGION_TOWN_LINES).format(region=region, towns=listing(towns)))
        for town in towns:
            draft.fact(town, "part_of_region", region)
        return draft

    def facility_draft(self, name: str, town: str, lines: list[str]) -> Draft:
        draft = self.draft()
        draft.say(self.rng.choice(lines).format(name=name, town=town))
        draft.say(self.rng.choice(PLACE_ASIDES))
        draft.fact(name, "situated_in", town)
        return draft

    def chain_draft(self, chain: str) -> Draft:
        hotels = [h for h, c in self.world.hotel_chain.items() if c == chain]
        draft = self.draft()
        places = [f"{hotel} in {self.world.hotel_town[hotel]}" for hotel in hotels]
        draft.say(self.rng.choice(CHAIN_LINES).format(chain=chain, hotels=listing(places)))
        for hotel in hotels:
            draft.fact(hotel, "belongs_to_chain", chain)
            draft.fact(hotel, "situated_in", self.world.hotel_town[hotel])
        return draft

    def airline_draft(self, airline: str, town: str) -> Draft:
        draft = self.draft()
        draft.say(self.rng.choice(AIRLINE_LINES).format(airline=airline, town=town))
        draft.say(self.rng.choice(AIRLINE_ASIDES))
        draft.fact(airline, "flies_out_of", town)
        return draft

    def medication_draft(self, condition: str) -> Draft:
        medications = CONDITIONS[condition][0]
        draft = self.draft()
        line = MEDICATION_LINES[0] if len(medications) == 1 else self.rng.choice(MEDICATION_LINES[1:])
        draft.say(line.format(condition=condition, first=medications[0], second=medications[-1]))
        for medication in medications:
            draft.fact(medication, "prescribed_for", condition)
        return draft

    # --- people ---

    def profile_drafts(self) -> list[Draft]:
        drafts = [self.family_draft(family) for family in self.world.families]
        for person in self.world.people:
            if person.kind == "doctor":
                drafts.append(self.doctor_draft(person))
            elif person.kind == "child":
                drafts.append(self.child_draft(person))
            elif person.kind == "elder":
                drafts.append(self.elder_draft(person))
            else:
                drafts += [self.adult_draft(person), self.health_draft(person)]
        return drafts

    def family_draft(self, family: list[Person]) -> Draft:
        grandfather, grandmother, first, second = family
        draft = self.draft()
        line = self.rng.choice(FAMILY_LINES)
        draft.say(
            line.format(
                he=grandfather.first, she=grandmother.first, surname=grandfather.surname,
                years=self.rng.randint(30, 52), year=self.rng.randint(1968, 1990),
                first=first.name, second=second.name,
            )
        )  # fmt: skip
        draft.say(self.rng.choice(ELDEST_LINES).format(first=first.first, second=second.first))
        draft.fact(*grandfather.spouse_fact)
        for child in (first, second):
            draft.fact(grandfather.name, "parent_of", child.name)
            draft.fact(grandmother.name, "parent_of", child.name)
        draft.fact(*first.sibling_facts[second])
        return draft

    def adult_draft(self, person: Person) -> Draft:
        draft = self.draft()
        self.occupation_and_home(draft, person)
        self.hometown(draft, person)
        self.own_household(draft, person)
        self.pet(draft, person)
        return draft

    def occupation_and_home(self, draft: Draft, person: Person) -> None:
        draft.say(fill(self.rng.choice(OCCUPATION_LINES), person, job=with_article(person.occupation),
                       bare=person.occupation, town=person.home))  # fmt: skip
        draft.fact(person.name, "has_occupation", self.world.kind(person.occupation, "occupation"))
        draft.fact(person.name, "resides_in", person.home)

    def hometown(self, draft: Draft, person: Person) -> None:
        lines = HOMETOWN_SAME_LINES if person.hometown == person.home else HOMETOWN_LINES
        draft.say(fill(self.rng.choice(lines), person, town=person.hometown))
        draft.fact(person.name, "grew_up_in", person.hometown)

    def own_household(self, draft: Draft, person: Person) -> None:
        """A married adult's text tells the marriage and the children, once for the couple."""
        if not person.spouse_fact or person.spouse_fact[0] != person.name:
            return
        spouse = person.spouse
        draft.say(fill(self.rng.choice(SPOUSE_LINES), person, spouse=spouse.name,
                       partner=kinship(spouse, "wife", "husband"), year=str(self.rng.randint(2008, 2021))))  # fmt: skip
        draft.fact(*person.spouse_fact)
        kids = person.children
        if not kids:
            return
        if len(kids) == 1:
            draft.say(f"They have a {kinship(kids[0], 'daughter', 'son')}, {kids[0].name}.")
        else:
            draft.say(self.rng.choice(CHILDREN_LINES).format(first=kids[0].name, second=kids[1].name))
        for kid in kids:
            draft.fact(person.name, "parent_of", kid.name)
            draft.fact(spouse.name, "parent_of", kid.name)
        if len(kids) == 2:
            draft.fact(*kids[0].sibling_facts[kids[1]])

    def pet(self, draft: Draft, person: Person) -> None:
        if not person.pet:
            return
        name, breed = person.pet
        self.world.entity_kinds[name] = ("pet", breed)
        draft.say(
            fill(self.rng.choice(PET_LINES), person, pet=name, breed=breed, a_breed=with_article(breed))
        )
        draft.fact(person.name, "owns_pet", name)
        draft.fact(name, "of_breed", breed)

    def health_draft(self, person: Person) -> Draft:
        draft = self.draft()
        draft.say(fill(self.rng.choice(DOCTOR_LINES), person, doctor=person.doctor.name))
        draft.fact(person.name, "patient_of", person.doctor.name)
        self.health_details(draft, person)
        return draft

    def health_details(self, draft: Draft, person: Person) -> None:
        if person.condition:
            draft.say(fill(self.rng.choice(CONDITION_LINES), person, condition=person.condition,
                           medication=person.medication))  # fmt: skip
            draft.fact(person.name, "diagnosed_with", person.condition)
            draft.fact(person.name, "takes_medication", person.medication)
        if person.specialist:
            draft.say(fill(self.rng.choice(REFERRAL_LINES), person, specialist=person.specialist.name,
                           doctor=person.doctor.surname))  # fmt: skip
            draft.fact(person.name, "referred_to", person.specialist.name)
        if person.allergy:
            draft.say(fill(self.rng.choice(ALLERGY_LINES), person, allergen=person.allergy))
            draft.fact(person.name, "allergic_to", person.allergy)
        if person.hospital:
            draft.say(fill(self.rng.choice(HOSPITAL_VISIT_LINES), person, hospital=person.hospital))
            draft.fact(person.name, "treated_at", person.hospital)
        if not (person.condition or person.allergy or person.hospital):
            draft.say(fill(self.rng.choice(HEALTHY_LINES), person))

    def elder_draft(self, person: Person) -> Draft:
        draft = self.draft()
        self.occupation_and_home(draft, person)
        self.hometown(draft, person)
        draft.say(fill(self.rng.choice(DOCTOR_LINES), person, doctor=person.doctor.name))
        draft.fact(person.name, "patient_of", person.doctor.name)
        self.health_details(draft, person)
        self.pet(draft, person)
        return draft

    def child_draft(self, person: Person) -> Draft:
        draft = self.draft()
        draft.say(fill(self.rng.choice(SCHOOL_CHILD_LINES), person, school=person.school, town=person.home))
        draft.fact(person.name, "pupil_at", person.school)
        draft.fact(person.name, "resides_in", person.home)
        draft.say(fill(self.rng.choice(CHILD_DOCTOR_LINES), person, doctor=person.doctor.name))
        draft.fact(person.name, "patient_of", person.doctor.name)
        self.health_details(draft, person)
        self.pet(draft, person)
        return draft

    def doctor_draft(self, doctor: Person) -> Draft:
        draft = self.draft()
        draft.say(fill(self.rng.choice(DOCTOR_PROFILE_LINES), doctor, job=with_article(doctor.occupation),
                       place=doctor.workplace, town=doctor.home, hometown=doctor.hometown))  # fmt: skip
        draft.fact(doctor.name, "has_occupation", doctor.occupation)
        draft.fact(doctor.name, "practises_at", doctor.workplace)
        draft.fact(doctor.name, "resides_in", doctor.home)
        draft.fact(doctor.name, "grew_up_in", doctor.hometown)
        self.pet(draft, doctor)
        return draft

    # --- trips and changes ---

    def trip_draft(self, trip: Trip) -> Draft:
        draft = self.draft(trip.when + timedelta(days=self.rng.randint(8, 20)))
        lead = trip.travellers[0]
        names = listing([t.name for t in trip.travellers])
        values = {"who": names, "destination": trip.destination, "when": month_year(trip.when),
                  "surname": lead.surname, "airline": trip.airline, "hotel": trip.hotel}  # fmt: skip
        draft.say(fill(self.rng.choice(TRIP_LINES[trip.kind]), lead, **values))
        lines = SOLO_TRAVEL_LINES if len(trip.travellers) == 1 else GROUP_TRAVEL_LINES
        draft.say(fill(self.rng.choice(lines), lead, **values))
        for traveller in trip.travellers:
            draft.fact(traveller.name, "holidayed_in", trip.destination, trip.when)
            draft.fact(traveller.name, "flew_with", trip.airline, trip.when)
            draft.fact(traveller.name, "stayed_at", trip.hotel, trip.when)
        return draft

    def change_draft(self, kind: str, subject, index: int) -> Draft:
        when = CHANGES_FROM + timedelta(days=4 * index + self.rng.randint(0, 2))
        draft = self.draft(when + timedelta(days=self.rng.randint(5, 25)))
        getattr(self, f"{kind}_change")(draft, subject, when)
        return draft

    def move_change(self, draft: Draft, household: Household, when: datetime) -> None:
        lead = household.members[0]
        names = listing([m.name for m in household.members])
        verb_they = "they" if len(household.members) > 1 else pronouns(lead)["he"]
        draft.say(fill(self.rng.choice(MOVE_LINES), lead, who=names, old=lead.home, new=lead.new_home,
                       when=month_year(when), they=verb_they))  # fmt: skip
        for member in household.members:
            draft.fact(member.name, "resides_in", member.new_home, when)

    def doctor_change(self, draft: Draft, person: Person, when: datetime) -> None:
        draft.say(fill(self.rng.choice(NEW_DOCTOR_LINES), person, old=person.doctor.name,
                       new=person.new_doctor.name, when=month_year(when)))  # fmt: skip
        draft.fact(person.name, "patient_of", person.new_doctor.name, when)

    def medication_change(self, draft: Draft, person: Person, when: datetime) -> None:
        draft.say(fill(self.rng.choice(SWITCH_LINES), person, old=person.medication, new=person.new_medication,
                       doctor=person.doctor_now.surname, when=month_year(when)))  # fmt: skip
        draft.fact(person.name, "takes_medication", person.new_medication, when)

    def practice_change(self, draft: Draft, doctor: Person, when: datetime) -> None:
        draft.say(fill(self.rng.choice(PRACTICE_LINES), doctor, old=doctor.workplace, new=doctor.new_workplace,
                       when=month_year(when)))  # fmt: skip
        draft.fact(doctor.name, "practises_at", doctor.new_workplace, when)


# --- the prose --------------------------------------------------------------------------------

REGION_LINES = [
    "{region} is a region of {country}.",
    "The region of {region} lies in the south of {country}.",
    "{region}, one of the regions of {country}, is known for its dry winters.",
]
REGION_TOWN_LINES = [
    "Its towns include {towns}.",
    "The towns of {towns} all belong to {region}.",
    "Among the towns of {region} are {towns}.",
]
CLINIC_LINES = [
    "{name} is a medical practice in {town}, open six days a week.",
    "You will find {name} on the main street of {town}, next to the market.",
    "{name} serves families in {town} and the farms around it.",
]
HOSPITAL_LINES = [
    "{name} in {town} has over six hundred beds and the region's busiest emergency department.",
    "{name} is the hospital of {town}; its new wing opened last year.",
]
SCHOOL_LINES = [
    "{name} is in {town}; about four hundred children attend.",
    "{name}, a state school in {town}, has just celebrated its fiftieth year.",
]
CHAIN_LINES = [
    "{chain} runs {hotels}.",
    "The {chain} group owns {hotels}.",
    "Guests of {chain} can choose between {hotels}.",
]
PLACE_ASIDES = [  # a second sentence that states no fact
    "Parking is free for the first hour.",
    "A bus stops right outside the front door.",
    "The building was renovated two years ago.",
    "Appointments can be made by phone or in person.",
]
AIRLINE_ASIDES = [
    "Its fleet is small but rarely late.",
    "Checked bags are included on every fare.",
    "It added two new routes last spring.",
]
AIRLINE_LINES = [
    "{airline} flies out of {town}, with routes across the islands.",
    "{airline} has its home base at the airport of {town}.",
    "From its base in {town}, {airline} runs a dozen daily routes.",
]
MEDICATION_LINES = [
    "For {condition}, doctors prescribe {first}.",
    "For {condition}, doctors usually prescribe {first}; {second} is the alternative.",
    "Patients with {condition} are given {first} or, when that does not suit them, {second}.",
    "{first} and {second} are both prescribed for {condition}.",
]
FAMILY_LINES = [
    "{he} and {she} {surname} have been married for {years} years and have two children, {first} and {second}.",
    "{he} {surname} married {she} in {year}; their children are {first} and {second}.",
    "In the {surname} family, {he} and his wife {she} raised two children, {first} and {second}.",
]
ELDEST_LINES = [
    "{first} is the elder of the two.",
    "{second} is the younger, by three years.",
    "{first} and {second} still talk on the phone every Sunday.",
]
OCCUPATION_LINES = [
    "{N} works as {job} and lives in {town}.",
    "{N} is {job} living in {town}.",
    "By trade {N} is {job}; {he} has a house in {town}.",
    "{N}, {job}, has made {his} home in {town}.",
    "Having trained as {job}, {N} now lives in {town}.",
]
HOMETOWN_LINES = [
    "{He} grew up in {town}.",
    "{He} grew up in {town} and still has friends there.",
    "{F} spent {his} childhood in {town}, where {he} grew up.",
    "Originally {he} comes from {town}, where {he} grew up.",
]
HOMETOWN_SAME_LINES = [
    "{He} grew up in {town} and never left.",
    "{He} grew up there too.",
]
SPOUSE_LINES = [
    "{He} is married to {spouse}.",
    "{His} {partner} is {spouse}; they married in {year}.",
    "{He} and {spouse} married in {year}.",
]
CHILDREN_LINES = [
    "They have two children, {first} and {second}.",
    "Their children are {first} and {second}.",
]
PET_LINES = [
    "{He} keeps {a_breed} called {pet}.",
    "{His} {breed}, {pet}, is rarely far from {his} side.",
    "There is also {pet}, {his} {breed}.",
    "{He} shares the house with {pet}, {a_breed}.",
]
DOCTOR_LINES = [
    "{N} is a patient of Dr. {doctor}.",
    "{N}'s doctor is Dr. {doctor}.",
    "{N} sees Dr. {doctor} for check-ups.",
    "{N} is registered with Dr. {doctor}.",
]
CHILD_DOCTOR_LINES = [
    "{His} doctor is Dr. {doctor}.",
    "When {he} is ill, {his} parents take {him} to Dr. {doctor}.",
    "{He} is a patient of Dr. {doctor}.",
]
CONDITION_LINES = [
    "{He} has {condition} and takes {medication} for it.",
    "{He} was diagnosed with {condition} some years ago and is on {medication}.",
    "For {his} {condition} {he} takes {medication}.",
    "{He} lives with {condition}, which is kept in check with {medication}.",
]
REFERRAL_LINES = [
    "Dr. {doctor} referred {him} to Dr. {specialist}.",
    "{He} has been referred to Dr. {specialist}.",
    "A referral letter sent {him} on to Dr. {specialist}.",
]
ALLERGY_LINES = [
    "{He} is allergic to {allergen}.",
    "{His} records note an allergy to {allergen}.",
    "{He} has a known allergy to {allergen}.",
]
HOSPITAL_VISIT_LINES = [
    "Last winter {he} was treated at {hospital}.",
    "{He} was treated at {hospital} after a fall.",
    "{He} had minor surgery at {hospital}.",
    "{He} was treated at {hospital} for a broken wrist.",
]
HEALTHY_LINES = ["{He} has no long-term conditions.", "Apart from the odd cold, {he} is in good health."]
SCHOOL_CHILD_LINES = [
    "{N} is a pupil at {school} and lives with {his} parents in {town}.",
    "{N} goes to {school}; the family lives in {town}.",
    "{N} attends {school}, near the family home in {town}.",
]
DOCTOR_PROFILE_LINES = [
    "Dr. {N} is {job} at {place}. {He} lives in {town} and grew up in {hometown}.",
    "Dr. {N} works as {job} and practises at {place}. Home is {town}; {he} grew up in {hometown}.",
    "At {place}, Dr. {N} practises as {job}. {He} grew up in {hometown} and now lives in {town}.",
]
TRIP_LINES = {
    "honeymoon": [
        "{who} spent their honeymoon in {destination} in {when}.",
        "For their honeymoon, {who} went to {destination} in {when}.",
    ],
    "anniversary": [
        "To celebrate their wedding anniversary, {who} went on holiday to {destination} in {when}.",
        "In {when} {who} marked their anniversary with a holiday in {destination}.",
    ],
    "family": [
        "In {when} {who} had a family holiday in {destination}.",
        "The {surname} household ({who}) went on holiday to {destination} in {when}.",
    ],
    "solo": [
        "In {when} {who} took a week's holiday in {destination} on {his} own.",
        "{who} went on holiday alone to {destination} in {when}.",
    ],
}
GROUP_TRAVEL_LINES = [
    "They flew with {airline} and stayed at {hotel}.",
    "{airline} flew them out, and they stayed at {hotel}.",
    "They stayed at {hotel}, having flown there with {airline}.",
]
SOLO_TRAVEL_LINES = [
    "{He} flew with {airline} and stayed at {hotel}.",
    "{He} stayed at {hotel}, having flown there with {airline}.",
]
MOVE_LINES = [
    "In {when} {who} moved from {old} to {new}.",
    "{who} have left {old}; since {when} {they} live in {new}.",
    "After years in {old}, {who} packed up and moved to {new} in {when}.",
]
NEW_DOCTOR_LINES = [
    "{N} has changed doctors: since {when} {he} is a patient of Dr. {new} instead of Dr. {old}.",
    "Since {when}, {N} is a patient of Dr. {new}, no longer of Dr. {old}.",
    "{N} left Dr. {old}'s list in {when} and registered with Dr. {new}.",
]
SWITCH_LINES = [
    "In {when} Dr. {doctor} switched {N} from {old} to {new}.",
    "{N} no longer takes {old}; since {when} {he} takes {new}.",
    "Because {old} gave {him} side effects, {N} has taken {new} since {when}.",
]
PRACTICE_LINES = [
    "Dr. {N} left {old} in {when} and now practises at {new}.",
    "Since {when}, Dr. {N} sees patients at {new} rather than at {old}.",
]


# --- the questions ------------------------------------------------------------------------------

QUESTION_COUNTS = {
    "direct": 20,
    "paraphrased": 15,
    "current_state": 15,
    "namesake": 10,
    "multi_hop": 30,
    "multi_hop_3": 30,
    "paraphrased_role": 30,
    "unanswerable": 5,
}


class FamilyQuestions:
    """The fixed questions, each shape a method returning (subject, question, gold) candidates."""

    def __init__(self, world: FamilyWorld):
        self.world = world
        self.rng = world.rng
        self.triples = {(f.source, f.relation, f.target) for t in world.texts for f in t.facts}
        everyone = world.people
        self.civilians = [p for p in everyone if p.kind != "doctor"]
        self.grown = [p for p in everyone if p.kind in ("elder", "adult", "inlaw")]
        self.doctors = [p for p in everyone if p.kind == "doctor"]
        self.first_names = defaultdict(list)
        for person in everyone:
            self.first_names[person.first].append(person)

    def fact(self, source: str, relation: str, target: str) -> tuple[str, str, str]:
        assert (source, relation, target) in self.triples, (source, relation, target)
        return (source, relation, target)

    def ask(self, forms: list[str], person: Person, **values: str) -> str:
        return fill(self.rng.choice(forms), person, **values)

    def all(self) -> list[Question]:
        shapes = {
            "direct": self.direct_shapes(),
            "paraphrased": self.paraphrased_shapes(),
            "current_state": self.current_shapes(),
            "namesake": [self.namesakes],
            "multi_hop": self.two_hop_shapes(),
            "multi_hop_3": self.three_hop_shapes(),
            "paraphrased_role": self.role_shapes(),
            "unanswerable": [self.unanswerable],
        }
        questions = []
        for category, full in QUESTION_COUNTS.items():
            questions += self.pick(category, shapes[category], self.world.count(full, 4))
        return questions

    def pick(self, category: str, shapes: list, wanted: int) -> list[Question]:
        """Round-robin over the shapes, each subject asked once per category."""
        pools = []
        for shape in shapes:
            candidates = list(shape())
            self.rng.shuffle(candidates)
            pools.append(candidates)
        chosen, subjects = [], set()
        while len(chosen) < wanted and any(pools):
            for pool in pools:
                while pool and len(chosen) < wanted:
                    subject, text, gold = pool.pop()
                    if subject not in subjects:
                        subjects.add(subject)
                        chosen.append(Question(category, text, gold))
                        break
        if len(chosen) < wanted:
            raise ValueError(f"only {len(chosen)} {category} questions, {wanted} wanted")
        return chosen

    # --- the current facts of a person ---

    def home(self, p: Person):
        return self.fact(p.name, "resides_in", p.home_now)

    def doctor(self, p: Person):
        return self.fact(p.name, "patient_of", p.doctor_now.name)

    def practice(self, d: Person):
        return self.fact(d.name, "practises_at", d.workplace_now)

    def job(self, p: Person):
        return self.fact(p.name, "has_occupation", p.occupation)

    def only_trip(self, p: Person) -> Trip | None:
        return p.trips[0] if len(p.trips) == 1 else None

    def town_of(self, place: str):
        return self.fact(place, "situated_in", self.world.workplaces()[place])

    def region_of(self, town: str):
        return self.fact(town, "part_of_region", self.world.town_region[town])

    def country_of(self, town: str):
        region = self.world.town_region[town]
        return self.fact(region, "belongs_to_country", self.world.region_country[region])

    def only_sibling(self, p: Person, gender: str) -> Person | None:
        same = [o for o in p.sibling_facts if o.gender == gender]
        return same[0] if len(same) == 1 else None

    def only_child(self, p: Person, gender: str) -> Person | None:
        same = [c for c in p.children if c.gender == gender]
        return same[0] if len(same) == 1 else None

    def only_one(self, people: list[Person], key, value) -> bool:
        """Whether exactly one of `people` has `value` as `key(person)`."""
        return sum(1 for p in people if key(p) == value) == 1

    # --- direct ---

    def direct_shapes(self) -> list:
        return [self.direct_job, self.direct_home, self.direct_hometown, self.direct_doctor,
                self.direct_condition, self.direct_allergy, self.direct_pet, self.direct_trip,
                self.direct_school, self.direct_hospital, self.direct_referral, self.direct_spouse,
                self.direct_practice]  # fmt: skip

    def direct_job(self):
        for p in self.grown:
            yield (
                p.name,
                self.ask(["What is {N}'s occupation?", "What occupation does {N} have?"], p),
                [self.job(p)],
            )

    def direct_home(self):
        for p in self.grown:
            if not p.new_home:
                forms = ["Where does {N} live?", "Which town does {N} live in?"]
                yield p.name, self.ask(forms, p), [self.home(p)]

    def direct_hometown(self):
        for p in self.grown:
            forms = ["Where did {N} grow up?", "Which town did {N} grow up in?"]
            yield p.name, self.ask(forms, p), [self.fact(p.name, "grew_up_in", p.hometown)]

    def direct_doctor(self):
        for p in self.civilians:
            if not p.new_doctor:
                forms = ["Who is {N}'s doctor?", "Which doctor is {N} a patient of?"]
                yield p.name, self.ask(forms, p), [self.doctor(p)]

    def direct_condition(self):
        for p in self.civilians:
            if p.condition:
                forms = ["What has {N} been diagnosed with?", "Which condition was {N} diagnosed with?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "diagnosed_with", p.condition)]

    def direct_allergy(self):
        for p in self.civilians:
            if p.allergy:
                forms = ["What is {N} allergic to?", "Which allergy does {N} have?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "allergic_to", p.allergy)]

    def direct_pet(self):
        for p in self.world.people:
            if p.pet:
                forms = ["What is the name of the pet {N} owns?", "What pet does {N} own?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "owns_pet", p.pet[0])]

    def direct_trip(self):
        for p in self.world.people:
            trip = self.only_trip(p)
            if trip:
                form, relation, target = self.rng.choice([
                    (["Which airline did {N} fly with?", "Who did {N} fly with on holiday?"], "flew_with", trip.airline),
                    (["Which hotel did {N} stay at?", "What hotel did {N} stay at on holiday?"], "stayed_at", trip.hotel),
                    (["Where did {N} go on holiday?", "Which place did {N} go on holiday to?"], "holidayed_in", trip.destination),
                ])  # fmt: skip
                yield p.name, self.ask(form, p), [self.fact(p.name, relation, target)]

    def direct_school(self):
        for p in self.civilians:
            if p.school:
                forms = ["Which school is {N} a pupil at?", "What school is {N} a pupil at?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "pupil_at", p.school)]

    def direct_hospital(self):
        for p in self.civilians:
            if p.hospital:
                forms = ["At which hospital was {N} treated?", "Where was {N} treated?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "treated_at", p.hospital)]

    def direct_referral(self):
        for p in self.civilians:
            if p.specialist:
                forms = ["Which specialist was {N} referred to?", "To which doctor was {N} referred?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "referred_to", p.specialist.name)]

    def direct_spouse(self):
        for p in self.grown:
            if p.spouse_fact:
                yield (
                    p.name,
                    self.ask(["Who is {N} married to?", "To whom is {N} married?"], p),
                    [self.fact(*p.spouse_fact)],
                )

    def direct_practice(self):
        for d in self.doctors:
            if not d.new_workplace:
                forms = ["Where does Dr. {N} practise?", "At which practice does Dr. {N} practise?"]
                yield d.name, self.ask(forms, d), [self.practice(d)]

    # --- paraphrased ---

    def paraphrased_shapes(self) -> list:
        return [self.say_home, self.say_hometown, self.say_job, self.say_doctor, self.say_condition,
                self.say_allergy, self.say_medication, self.say_pet, self.say_trip, self.say_spouse,
                self.say_school, self.say_hospital]  # fmt: skip

    def say_home(self):
        for p in self.grown:
            if not p.new_home:
                forms = ["Which town is home to {N}?", "Where has {N} settled?", "Where is {N}'s house?"]
                yield p.name, self.ask(forms, p), [self.home(p)]

    def say_hometown(self):
        for p in self.grown:
            forms = [
                "Where was {N} raised?",
                "In which town did {N} spend {his} childhood?",
                "Where is {N} from originally?",
            ]
            yield p.name, self.ask(forms, p), [self.fact(p.name, "grew_up_in", p.hometown)]

    def say_job(self):
        for p in self.grown:
            forms = ["What does {N} do for a living?", "What line of work is {N} in?", "What is {N}'s job?"]
            yield p.name, self.ask(forms, p), [self.job(p)]

    def say_doctor(self):
        for p in self.grown:
            if not p.new_doctor:
                forms = ["Which physician looks after {N}?", "Who does {N} go to when {he} is ill?"]
                yield p.name, self.ask(forms, p), [self.doctor(p)]

    def say_condition(self):
        for p in self.civilians:
            if p.condition:
                forms = ["What illness does {N} suffer from?", "What health problem does {N} have?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "diagnosed_with", p.condition)]

    def say_allergy(self):
        for p in self.civilians:
            if p.allergy:
                forms = ["What does {N} react badly to?", "What sets off a reaction in {N}?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "allergic_to", p.allergy)]

    def say_medication(self):
        for p in self.civilians:
            if p.medication and not p.new_medication:
                forms = ["What pills is {N} on?", "Which drug has {N} been put on?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "takes_medication", p.medication)]

    def say_pet(self):
        for p in self.world.people:
            if p.pet:
                forms = ["What is {N}'s animal called?", "What name did {N} give {his} companion animal?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "owns_pet", p.pet[0])]

    def say_trip(self):
        for p in self.world.people:
            trip = self.only_trip(p)
            if trip:
                form, relation, target = self.rng.choice([
                    (["Which carrier did {N} travel on?", "What airline took {N} on {his} trip?"], "flew_with", trip.airline),
                    (["Where did {N} put up during {his} vacation?", "Where did {N} sleep on {his} trip?"], "stayed_at", trip.hotel),
                    (["Where did {N} get away to?", "Which place did {N} visit on vacation?"], "holidayed_in", trip.destination),
                ])  # fmt: skip
                yield p.name, self.ask(form, p), [self.fact(p.name, relation, target)]

    def say_spouse(self):
        for p in self.grown:
            if p.spouse_fact:
                partner = kinship(p.spouse, "wife", "husband")
                forms = ["Who is {N}'s {partner}?", "Who did {N} wed?"]
                yield p.name, self.ask(forms, p, partner=partner), [self.fact(*p.spouse_fact)]

    def say_school(self):
        for p in self.civilians:
            if p.school:
                forms = ["Where does {N} go to class?", "Where does {N} have {his} lessons?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "pupil_at", p.school)]

    def say_hospital(self):
        for p in self.civilians:
            if p.hospital:
                forms = ["Which hospital has {N} been in?", "Where did {N} receive hospital care?"]
                yield p.name, self.ask(forms, p), [self.fact(p.name, "treated_at", p.hospital)]

    # --- current state ---

    def current_shapes(self) -> list:
        return [self.now_home, self.now_doctor, self.now_medication, self.now_practice]

    def now_home(self):
        for p in self.grown:
            if p.new_home:
                forms = ["Where does {N} live now?", "Which town is {N} living in these days?",
                         "Where has {N} moved to?", "What is {N}'s current place of residence?"]  # fmt: skip
                yield p.name, self.ask(forms, p), [self.home(p)]

    def now_doctor(self):
        for p in self.grown:
            if p.new_doctor:
                forms = ["Who is {N}'s doctor now?", "Which doctor is looking after {N} at the moment?",
                         "Whose patient is {N} since the change?"]  # fmt: skip
                yield p.name, self.ask(forms, p), [self.doctor(p)]

    def now_medication(self):
        for p in self.grown:
            if p.new_medication:
                forms = ["What medication is {N} on now?", "Which drug does {N} currently take?",
                         "After the switch, what does {N} take?"]  # fmt: skip
                yield p.name, self.ask(forms, p), [self.fact(p.name, "takes_medication", p.new_medication)]

    def now_practice(self):
        for d in self.doctors:
            if d.new_workplace:
                forms = [
                    "Where does Dr. {N} practise now?",
                    "At which practice can Dr. {N} be found these days?",
                ]
                yield d.name, self.ask(forms, d), [self.practice(d)]

    # --- namesakes ---

    def distinguishers(self, p: Person) -> list[tuple[str, str, tuple]]:
        """(kind, phrase, fact) that tell p from the others of the same first name."""
        others = self.first_names[p.first]
        found = []
        if p.hometown and self.only_one(others, lambda o: o.hometown, p.hometown):
            phrase = self.rng.choice(["who was brought up in {t}", "whose childhood was spent in {t}"])
            found.append(
                ("grew_up_in", phrase.format(t=p.hometown), self.fact(p.name, "grew_up_in", p.hometown))
            )
        if not p.new_home and self.only_one(others, lambda o: o.home_now, p.home):
            phrase = self.rng.choice(["who has a house in {t}", "who is based in {t}"])
            found.append(("resides_in", phrase.format(t=p.home), self.home(p)))
        if p.pet:
            found.append(
                ("owns_pet", f"whose pet is called {p.pet[0]}", self.fact(p.name, "owns_pet", p.pet[0]))
            )
        if p.spouse_fact:
            phrase = f"whose {kinship(p.spouse, 'wife', 'husband')} is {p.spouse.name}"
            found.append(("spouse_of", phrase, self.fact(*p.spouse_fact)))
        if p.allergy and self.only_one(others, lambda o: o.allergy, p.allergy):
            found.append(
                (
                    "allergic_to",
                    f"who has an allergy to {p.allergy}",
                    self.fact(p.name, "allergic_to", p.allergy),
                )
            )
        return found

    def namesake_asks(self, p: Person) -> list[tuple[str, list[str], tuple]]:
        asks = [
            (
                "resides_in",
                ["Where does the {F} {who} live?", "Which town does the {F} {who} live in?"],
                self.home(p),
            )
        ]
        if p.kind != "child":
            asks.append(("has_occupation", ["What does the {F} {who} do for a living?"], self.job(p)))
        if p.doctor_now:
            asks.append(("patient_of", ["Who is the doctor of the {F} {who}?"], self.doctor(p)))
        trip = self.only_trip(p)
        if trip:
            asks.append(
                (
                    "flew_with",
                    ["Which airline did the {F} {who} fly with?"],
                    self.fact(p.name, "flew_with", trip.airline),
                )
            )
        return asks

    def namesakes(self):
        for p in self.world.people:
            if len(self.first_names[p.first]) < 2:
                continue
            marks, asks = self.distinguishers(p), self.namesake_asks(p)
            pairs = [(m, a) for m in marks for a in asks if m[0] != a[0]]
            if pairs:
                (_, phrase, mark), (_, forms, asked) = self.rng.choice(pairs)
                yield p.name, self.ask(forms, p, who=phrase), [mark, asked]

    # --- two hops ---

    def two_hop_shapes(self) -> list:
        return [self.doctor_practice, self.doctor_specialty, self.doctor_home, self.specialist_practice,
                self.sibling_home, self.parent_job, self.spouse_hometown, self.spouse_doctor, self.pet_breed,
                self.hotel_chain, self.holiday_region, self.hometown_region, self.airline_base,
                self.child_school]  # fmt: skip

    def doctor_practice(self):
        for p in self.civilians:
            forms = ["At which practice does {N}'s doctor work?", "Where does {N}'s doctor see patients?"]
            yield p.name, self.ask(forms, p), [self.doctor(p), self.practice(p.doctor_now)]

    def doctor_specialty(self):
        for p in self.civilians:
            forms = [
                "What is the specialty of {N}'s doctor?",
                "What kind of doctor is the one {N} is registered with?",
            ]
            yield p.name, self.ask(forms, p), [self.doctor(p), self.job(p.doctor_now)]

    def doctor_home(self):
        for p in self.civilians:
            forms = ["Where does {N}'s doctor live?", "In which town does {N}'s doctor live?"]
            yield p.name, self.ask(forms, p), [self.doctor(p), self.home(p.doctor_now)]

    def specialist_practice(self):
        for p in self.civilians:
            if p.specialist:
                forms = ["Where does the specialist {N} was referred to practise?",
                         "Where does the consultant that {N} was sent to see patients?"]  # fmt: skip
                yield p.name, self.ask(forms, p), [self.fact(p.name, "referred_to", p.specialist.name),
                                                   self.practice(p.specialist)]  # fmt: skip

    def sibling_home(self):
        for p in self.civilians:
            for gender, word in (("f", "sister"), ("m", "brother")):
                sibling = self.only_sibling(p, gender)
                if sibling:
                    forms = ["Where does {N}'s {word} live?", "In which town does {N}'s {word} live?"]
                    yield (
                        p.name,
                        self.ask(forms, p, word=word),
                        [p.sibling_facts[sibling], self.home(sibling)],
                    )

    def parent_job(self):
        for p in self.civilians:
            for parent in p.parents:
                word = kinship(parent, "mother", "father")
                forms = ["What does {N}'s {word} do for a living?", "What is the occupation of {N}'s {word}?"]
                gold = [self.fact(parent.name, "parent_of", p.name), self.job(parent)]
                yield p.name, self.ask(forms, p, word=word), gold

    def spouse_hometown(self):
        for p in self.grown:
            if p.spouse:
                word = kinship(p.spouse, "wife", "husband")
                forms = ["Where did {N}'s {word} grow up?", "Which town is {N}'s {word} originally from?"]
                gold = [self.fact(*p.spouse_fact), self.fact(p.spouse.name, "grew_up_in", p.spouse.hometown)]
                yield p.name, self.ask(forms, p, word=word), gold

    def spouse_doctor(self):
        for p in self.grown:
            if p.spouse:
                word = kinship(p.spouse, "wife", "husband")
                forms = ["Who is the doctor of {N}'s {word}?", "Which doctor does {N}'s {word} see?"]
                yield (
                    p.name,
                    self.ask(forms, p, word=word),
                    [self.fact(*p.spouse_fact), self.doctor(p.spouse)],
                )

    def pet_breed(self):
        for p in self.world.people:
            if p.pet:
                forms = ["What breed is {N}'s pet?", "What kind of animal does {N} keep?"]
                gold = [self.fact(p.name, "owns_pet", p.pet[0]), self.fact(p.pet[0], "of_breed", p.pet[1])]
                yield p.name, self.ask(forms, p), gold

    def hotel_chain(self):
        for p in self.world.people:
            trip = self.only_trip(p)
            if trip:
                forms = [
                    "Which hotel group runs the hotel {N} stayed at?",
                    "What chain does {N}'s holiday hotel belong to?",
                ]
                gold = [self.fact(p.name, "stayed_at", trip.hotel),
                        self.fact(trip.hotel, "belongs_to_chain", self.world.hotel_chain[trip.hotel])]  # fmt: skip
                yield p.name, self.ask(forms, p), gold

    def holiday_region(self):
        for p in self.world.people:
            trip = self.only_trip(p)
            if trip:
                forms = [
                    "In which region did {N} spend {his} holiday?",
                    "Which region did {N} travel to on holiday?",
                ]
                gold = [self.fact(p.name, "holidayed_in", trip.destination), self.region_of(trip.destination)]
                yield p.name, self.ask(forms, p), gold

    def hometown_region(self):
        for p in self.grown:
            forms = ["In which region is the town where {N} grew up?", "Which region does {N} come from?"]
            yield (
                p.name,
                self.ask(forms, p),
                [self.fact(p.name, "grew_up_in", p.hometown), self.region_of(p.hometown)],
            )

    def airline_base(self):
        for p in self.world.people:
            trip = self.only_trip(p)
            if trip:
                forms = ["Which town does the airline {N} flew with operate from?",
                         "Where is the airline that flew {N} on holiday based?"]  # fmt: skip
                gold = [self.fact(p.name, "flew_with", trip.airline),
                        self.fact(trip.airline, "flies_out_of", self.world.airline_base[trip.airline])]  # fmt: skip
                yield p.name, self.ask(forms, p), gold

    def child_school(self):
        for p in self.grown:
            for gender, word in (("f", "daughter"), ("m", "son")):
                child = self.only_child(p, gender)
                if child and child.school:
                    forms = [
                        "Which school does {N}'s {word} attend?",
                        "Where does {N}'s {word} go to school?",
                    ]
                    gold = [
                        self.fact(p.name, "parent_of", child.name),
                        self.fact(child.name, "pupil_at", child.school),
                    ]
                    yield p.name, self.ask(forms, p, word=word), gold

    # --- three hops ---

    def three_hop_shapes(self) -> list:
        return [self.doctor_town, self.specialist_town, self.grandparent_home, self.inlaw_job,
                self.hometown_country, self.holiday_country, self.sibling_doctor_practice,
                self.child_pet_breed, self.aunt_home, self.airline_region, self.spouse_doctor_practice]  # fmt: skip

    def doctor_town(self):
        for p in self.civilians:
            doctor = p.doctor_now
            forms = [
                "In which town is the practice of {N}'s doctor?",
                "Which town does {N}'s doctor work in?",
            ]
            yield (
                p.name,
                self.ask(forms, p),
                [self.doctor(p), self.practice(doctor), self.town_of(doctor.workplace_now)],
            )

    def specialist_town(self):
        for p in self.civilians:
            if p.specialist:
                forms = ["In which town does the specialist {N} was referred to work?",
                         "Which town would {N} travel to to see the specialist {he} was referred to?"]  # fmt: skip
                gold = [self.fact(p.name, "referred_to", p.specialist.name), self.practice(p.specialist),
                        self.town_of(p.specialist.workplace_now)]  # fmt: skip
                yield p.name, self.ask(forms, p), gold

    def grandparent_home(self):
        for p in self.civilians:
            for parent in p.parents:
                for grandparent in parent.parents:
                    word = kinship(grandparent, "grandmother", "grandfather")
                    forms = ["Where does {N}'s {word} live?", "In which town does {N}'s {word} live?"]
                    gold = [self.fact(grandparent.name, "parent_of", parent.name),
                            self.fact(parent.name, "parent_of", p.name), self.home(grandparent)]  # fmt: skip
                    yield p.name, self.ask(forms, p, word=word), gold

    def inlaw_job(self):
        for p in self.world.people:
            if p.kind == "inlaw":
                for sibling, sibling_fact in p.spouse.sibling_facts.items():
                    word = kinship(sibling, "sister-in-law", "brother-in-law")
                    forms = ["What does {N}'s {word} do for a living?", "What is the job of {N}'s {word}?"]
                    gold = [self.fact(*p.spouse_fact), sibling_fact, self.job(sibling)]
                    yield p.name, self.ask(forms, p, word=word), gold

    def hometown_country(self):
        for p in self.grown:
            forms = ["Which country is {N}'s hometown in?", "In which country did {N} grow up?"]
            gold = [
                self.fact(p.name, "grew_up_in", p.hometown),
                self.region_of(p.hometown),
                self.country_of(p.hometown),
            ]
            yield p.name, self.ask(forms, p), gold

    def holiday_country(self):
        for p in self.world.people:
            trip = self.only_trip(p)
            if trip:
                forms = [
                    "In which country did {N} go on holiday?",
                    "Which country did {N} visit on {his} holiday?",
                ]
                gold = [self.fact(p.name, "holidayed_in", trip.destination), self.region_of(trip.destination),
                        self.country_of(trip.destination)]  # fmt: skip
                yield p.name, self.ask(forms, p), gold

    def sibling_doctor_practice(self):
        for p in self.civilians:
            for gender, word in (("f", "sister"), ("m", "brother")):
                sibling = self.only_sibling(p, gender)
                if sibling:
                    forms = [
                        "Where does {N}'s {word}'s doctor practise?",
                        "At which practice does the doctor of {N}'s {word} work?",
                    ]
                    gold = [p.sibling_facts[sibling], self.doctor(sibling), self.practice(sibling.doctor_now)]
                    yield p.name, self.ask(forms, p, word=word), gold

    def child_pet_breed(self):
        for p in self.grown:
            for gender, word in (("f", "daughter"), ("m", "son")):
                child = self.only_child(p, gender)
                if child and child.pet:
                    forms = [
                        "What breed is the pet of {N}'s {word}?",
                        "What kind of animal does {N}'s {word} keep?",
                    ]
                    gold = [self.fact(p.name, "parent_of", child.name), self.fact(child.name, "owns_pet", child.pet[0]),
                            self.fact(child.pet[0], "of_breed", child.pet[1])]  # fmt: skip
                    yield p.name, self.ask(forms, p, word=word), gold

    def aunt_home(self):
        for p in self.civilians:
            for parent in p.parents:
                for sibling, sibling_fact in parent.sibling_facts.items():
                    word = kinship(sibling, "aunt", "uncle")
                    forms = ["Where does {N}'s {word} live?", "In which town does {N}'s {word} live?"]
                    gold = [self.fact(parent.name, "parent_of", p.name), sibling_fact, self.home(sibling)]
                    yield p.name, self.ask(forms, p, word=word), gold

    def airline_region(self):
        for p in self.world.people:
            trip = self.only_trip(p)
            if trip:
                base = self.world.airline_base[trip.airline]
                forms = ["In which region is the home base of the airline {N} flew with?",
                         "Which region is the airline that flew {N} on holiday based in?"]  # fmt: skip
                gold = [self.fact(p.name, "flew_with", trip.airline), self.fact(trip.airline, "flies_out_of", base),
                        self.region_of(base)]  # fmt: skip
                yield p.name, self.ask(forms, p), gold

    def spouse_doctor_practice(self):
        for p in self.grown:
            if p.spouse:
                word = kinship(p.spouse, "wife", "husband")
                forms = [
                    "At which practice does {N}'s {word}'s doctor work?",
                    "Where does the doctor of {N}'s {word} practise?",
                ]
                gold = [self.fact(*p.spouse_fact), self.doctor(p.spouse), self.practice(p.spouse.doctor_now)]
                yield p.name, self.ask(forms, p, word=word), gold

    # --- roles, conditions and kinds named by paraphrase ---

    def role_shapes(self) -> list:
        return [self.role_namesake_home, self.role_at_practice, self.role_family_condition,
                self.role_family_allergy, self.role_family_pet, self.role_of_doctor,
                self.role_namesake_condition_doctor, self.role_in_town, self.role_of_specialist]  # fmt: skip

    def role_phrase(self, p: Person) -> str:
        if p.kind == "doctor":
            return f"works as a {SPECIALTIES[p.occupation]}"
        return OCCUPATIONS[p.occupation]

    def role_namesake_home(self):
        for p in self.grown + self.doctors:
            others = self.first_names[p.first]
            if len(others) > 1 and self.only_one(others, lambda o: o.occupation, p.occupation):
                forms = ["Where does the {F} who {role} live?", "Which town is the {F} who {role} based in?"]
                yield p.name, self.ask(forms, p, role=self.role_phrase(p)), [self.job(p), self.home(p)]

    def role_at_practice(self):
        for d in self.doctors:
            colleagues = [o for o in self.doctors if o.workplace_now == d.workplace_now]
            if self.only_one(colleagues, lambda o: o.occupation, d.occupation):
                kind = SPECIALTIES[d.occupation]
                forms = ["Who is the {kind} at {place}?", "Which {kind} works at {place}?"]
                yield (
                    d.name,
                    self.ask(forms, d, kind=kind, place=d.workplace_now),
                    [self.job(d), self.practice(d)],
                )

    def family_members(self, surname: str) -> list[Person]:
        return [p for p in self.civilians if p.surname == surname]

    def role_family_condition(self):
        for p in self.civilians:
            family = self.family_members(p.surname)
            if (
                p.condition
                and p.kind != "inlaw"
                and self.only_one(family, lambda o: o.condition, p.condition)
            ):
                what = CONDITIONS[p.condition][2][0]
                forms = [
                    "Which member of the {surname} family has {what}?",
                    "Who in the {surname} family suffers from {what}?",
                ]
                gold = [self.fact(p.name, "diagnosed_with", p.condition)]
                yield p.name, self.ask(forms, p, surname=p.surname, what=what), gold

    def role_family_allergy(self):
        for p in self.civilians:
            family = self.family_members(p.surname)
            if p.allergy and p.kind != "inlaw" and self.only_one(family, lambda o: o.allergy, p.allergy):
                what = ALLERGENS[p.allergy]
                forms = [
                    "Which of the {surname} family cannot be around {what}?",
                    "Who in the {surname} family reacts to {what}?",
                ]
                gold = [self.fact(p.name, "allergic_to", p.allergy)]
                yield p.name, self.ask(forms, p, surname=p.surname, what=what), gold

    def role_family_pet(self):
        for p in self.civilians:
            family = self.family_members(p.surname)
            if p.pet and p.kind != "inlaw" and self.only_one(family, lambda o: o.pet and o.pet[1], p.pet[1]):
                what = BREEDS[p.pet[1]]
                forms = [
                    "Which member of the {surname} family keeps a {what}?",
                    "Who in the {surname} family has a {what}, and what is it called?",
                ]
                gold = [self.fact(p.name, "owns_pet", p.pet[0]), self.fact(p.pet[0], "of_breed", p.pet[1])]
                yield p.name, self.ask(forms, p, surname=p.surname, what=what), gold

    def role_of_doctor(self):
        for p in self.civilians:
            kind = SPECIALTIES[p.doctor_now.occupation]
            forms = ["Is {N} looked after by a {kind}?", "Does {N} see a {kind}, and who is it?"]
            yield p.name, self.ask(forms, p, kind=kind), [self.doctor(p), self.job(p.doctor_now)]

    def role_namesake_condition_doctor(self):
        for p in self.civilians:
            others = self.first_names[p.first]
            if p.condition and len(others) > 1 and self.only_one(others, lambda o: o.condition, p.condition):
                what = CONDITIONS[p.condition][2][0]
                forms = [
                    "Who is the doctor of the {F} with {what}?",
                    "Which doctor treats the {F} who has {what}?",
                ]
                gold = [self.fact(p.name, "diagnosed_with", p.condition), self.doctor(p)]
                yield p.name, self.ask(forms, p, what=what), gold

    def role_in_town(self):
        for p in self.grown:
            neighbours = [o for o in self.grown + self.doctors if o.home_now == p.home_now]
            if self.only_one(neighbours, lambda o: o.occupation, p.occupation):
                forms = ["Who in {town} {role}?", "Is there someone living in {town} who {role}?"]
                yield (
                    p.name,
                    self.ask(forms, p, town=p.home_now, role=OCCUPATIONS[p.occupation]),
                    [self.job(p), self.home(p)],
                )

    def role_of_specialist(self):
        for p in self.civilians:
            if p.specialist:
                kind = SPECIALTIES[p.specialist.occupation]
                forms = ["Which {kind} was {N} referred to?", "Who is the {kind} that {N} was sent to?"]
                gold = [self.fact(p.name, "referred_to", p.specialist.name), self.job(p.specialist)]
                yield p.name, self.ask(forms, p, kind=kind), gold

    # --- unanswerable ---

    def unanswerable(self):
        grown = self.rng.sample(self.grown, 4)
        petless = next(p for p in self.grown if not p.pet)
        yield "blood", fill("What is {N}'s blood type?", grown[0]), []
        yield "cruise", fill("Which cruise line did {N} sail with last winter?", grown[1]), []
        yield "stranger", "Who is Zanele Brightwater's dentist?", []
        yield "insurer", fill("Which insurance company covers {N}?", grown[2]), []
        yield "vaccine", fill("Which vaccinations did {N}'s parrot get this spring?", petless), []
        yield "degree", fill("Which university did {N} graduate from?", grown[3]), []
        yield "ward", f"What are the visiting hours of the maternity ward at {BIG_HOSPITAL}?", []


def build_family_world(seed: int = 41, scale: float = 1.0) -> World:
    """The family, health and travel world: the same world for the same seed and scale."""
    world = FamilyWorld(seed, scale)
    world.build()
    questions = FamilyQuestions(world).all()
    return World(world.texts, questions, functional=FUNCTIONAL)
