"""The business world of the retrieval-quality benchmark (`bench/retrieval_quality.py --world business`).

Written independently of the standard and chains worlds (its own prose, relation names, people, firms and
places), so that its figures tell whether retrieval generalises beyond the worlds it was tuned on.

What it holds, at scale 1.0 (seed 53): about 2,900 scripted facts over about 540 texts (staff notes, org
charts, project kickoffs, press releases, deal news, city guides; then some 120 change notes in 2024).

- Eight cities outside Europe (Iloilo, Kisumu, Arusha, Kumasi, Arequipa, Da Nang, Mysuru, Curitiba), four
  districts each; one district (Mandurriao Business Park) holds about ten head offices.
- About 30 companies and 6 investment funds, each with a sector, a main office and some branches; teams
  that are units of them. Tembo Meridian Holdings employs about 140 people; Kisiwa National Bank
  commissions about 20 projects.
- About 430 employees, each with a job title, a team, an employer and a manager (as facts), some with a
  certification or a board seat. Twelve first names (Rahul, Mei, Tariq ...) are shared by eleven people
  each, told apart only by surname, team, title or certification.
- About 60 projects (client, budget, deliverable, deadline, status, staffing team, manager, subcontractor),
  25 contracts (issuer, winner, value, service), 25 products (shipping team, price, audience), 10 takeovers,
  about 30 investments by the funds and 15 board seats.
- In 2024: promotions, team moves, job changes, new team heads (their teams re-pointed to them), office
  moves and project status changes. Title, team, manager, employer, main office and project status are
  functional: the newer fact supersedes the older one.

Questions (fixed by the seed; at scale 1.0): direct (20) and paraphrased (15) ask one fact; current_state
(15) one fact that changed, the new one gold; namesake (10) names a shared first name and an attribute;
multi_hop (30) and multi_hop_3 (30) chain two or three facts, the middle entities unnamed; paraphrased_role
(30) names a job title, a sector, a deliverable or a certification by paraphrase only, some among
namesakes ("Which team is the Rahul who writes the code on?"); unanswerable (5) have no gold.

`build_business_world(scale=0.1)` is a proportionally smaller world (at least four questions of each
category) for smoke runs.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from retrieval_world import Fact, Question, Text, World

# Relations of which a subject holds one at a time: a newer statement supersedes the older one.
FUNCTIONAL = frozenset(
    {"employed_by", "holds_title", "member_of_team", "answers_to", "has_main_office_in", "has_status"}
)

SENTENCES = {
    "employed_by": "{s} is employed by {t}.",
    "holds_title": "{s} holds the title of {t}.",
    "member_of_team": "{s} is a member of {t}.",
    "answers_to": "{s} reports to {t}.",
    "certified_as": "{s} is certified as {t}.",
    "on_board_of": "{s} sits on the board of {t}.",
    "manages_project": "{s} manages {t}.",
    "unit_of": "{s} is a unit of {t}.",
    "operates_in_sector": "{s} operates in the {t} sector.",
    "has_main_office_in": "{s} has its main office in {t}.",
    "runs_branch_in": "{s} runs a branch in {t}.",
    "part_of_city": "{s} is a district of {t}.",
    "took_over": "{s} took over {t}.",
    "invested_in": "{s} invested in {t}.",
    "commissioned_by": "{s} was commissioned by {t}.",
    "staffed_by_team": "{s} is staffed by {t}.",
    "has_budget": "{s} has a budget of {t}.",
    "will_deliver": "{s} will deliver a {t}.",
    "due_by": "{s} is due by {t}.",
    "has_status": "The status of {s} is {t}.",
    "subcontracted_to": "{s} is subcontracted to {t}.",
    "issued_by": "{s} was issued by {t}.",
    "awarded_to": "{s} was awarded to {t}.",
    "valued_at": "{s} is valued at {t}.",
    "covers_service": "{s} covers {t}.",
    "ships_product": "{s} ships {t}.",
    "sells_for": "{s} sells for {t}.",
    "aimed_at": "{s} is aimed at {t}.",
}

CITIES = {
    "Iloilo": ["Mandurriao Business Park", "Jaro Plaza", "Molo Riverside", "Lapaz Quarter"],
    "Kisumu": ["Milimani Heights", "Kondele Works", "Lakeview Quay", "Nyalenda Park"],
    "Arusha": ["Njiro Terrace", "Themi Gardens", "Sakina Crossing", "Kijenge Market"],
    "Kumasi": ["Adum Central", "Ahodwo Ridge", "Asokwa Yards", "Nhyiaso Court"],
    "Arequipa": ["Yanahuara Plaza", "Cayma Heights", "Selva Alegre Park", "Sachaca Fields"],
    "Da Nang": ["Hai Chau Bay", "Son Tra Point", "Ngu Hanh Son Fields", "Thanh Khe Docks"],
    "Mysuru": ["Vijayanagar Layout", "Kuvempunagar Circle", "Jayalakshmipuram", "Hebbal Industrial Estate"],
    "Curitiba": ["Batel Square", "Agua Verde Park", "Cidade Industrial Estate", "Centro Civico Row"],
}
HUB_DISTRICT = "Mandurriao Business Park"

# sector: (name endings of its firms, paraphrases of what such a firm does)
SECTORS = {
    "payments processing": (
        ["Payments", "Pay Systems"],
        ["moves money between shoppers and merchants", "handles card transactions for shops"],
    ),
    "banking": (["National Bank", "Savings Bank"], ["takes deposits and lends to households"]),
    "microfinance": (
        ["Microfinance", "Credit Cooperative"],
        ["lends small sums to market traders", "gives tiny loans to village shopkeepers"],
    ),
    "cold-chain logistics": (
        ["Cold Chain", "Reefer Lines"],
        ["keeps food chilled while trucking it across the country", "runs refrigerated trucks"],
    ),
    "agritech": (["Agritech", "Farm Systems"], ["builds software for farmers", "sells apps to growers"]),
    "solar energy": (["Solar", "Sun Power"], ["sells electricity from rooftop panels"]),
    "telemedicine": (["Telehealth", "Clinics Online"], ["lets patients see a doctor over video"]),
    "textile manufacturing": (["Textiles", "Looms"], ["weaves and dyes fabric"]),
    "insurance": (["Assurance", "Insurance"], ["covers customers against losses for a premium"]),
    "cybersecurity": (["Cyber Defence", "Secure Networks"], ["protects corporate networks from hackers"]),
    "construction": (["Builders", "Construction"], ["puts up office towers and bridges"]),
    "edtech": (["Learning", "Classrooms"], ["sells online courses to schoolchildren"]),
    "freight forwarding": (
        ["Freight", "Cargo Lines"],
        ["arranges shipping of goods across borders for other firms"],
    ),
    "management consulting": (["Consulting", "Partners"], ["advises executives on strategy"]),
    "cloud hosting": (["Cloud", "Data Centres"], ["rents out servers by the hour"]),
    "market research": (["Insights", "Survey Group"], ["runs consumer surveys for brands"]),
    "retail": (["Stores", "Supermarkets"], ["runs a chain of grocery shops"]),
    "telecommunications": (["Telecom", "Mobile"], ["sells phone and internet subscriptions"]),
    "pharmaceuticals": (["Pharma", "Laboratories"], ["produces medicines"]),
}
FUND_SECTOR = "venture capital"
FUND_ENDINGS = ["Ventures", "Capital", "Growth Fund"]

CEO, CFO, CTO, COO = (
    "chief executive officer",
    "chief financial officer",
    "chief technology officer",
    "chief operating officer",
)
MANAGING_PARTNER = "managing partner"
CPA, CFA, CISA = (
    "Certified Public Accountant",
    "Chartered Financial Analyst",
    "Certified Information Systems Auditor",
)
AWS, CSM, CEH = "AWS Solutions Architect", "Certified Scrum Master", "Certified Ethical Hacker"
SIX, PMP = "Six Sigma Black Belt", "Project Management Professional"


@dataclass(frozen=True)
class Function:
    """A kind of team: its head's title, its members' titles, the executive its head reports to."""

    head: str
    members: tuple[str, ...]
    boss: str
    certs: tuple[str, ...] = ()
    ships: bool = False  # whether such a team ships products


FUNCTIONS = {
    "Finance": Function(
        "financial controller",
        ("financial analyst", "payroll clerk", "treasurer", "tax accountant"),
        CFO,
        (CPA, CFA),
    ),
    "Internal Audit": Function("chief audit executive", ("internal auditor",), CFO, (CISA, CPA)),
    "Payments Platform": Function(
        "engineering manager",
        ("software developer", "quality assurance tester", "site reliability engineer"),
        CTO,
        (AWS, CSM),
        True,
    ),
    "Mobile Apps": Function(
        "engineering manager",
        ("software developer", "UX designer", "quality assurance tester"),
        CTO,
        (CSM,),
        True,
    ),
    "Data Platform": Function(
        "engineering manager", ("data engineer", "data scientist", "software developer"), CTO, (AWS,), True
    ),
    "Infrastructure": Function(
        "engineering manager", ("site reliability engineer", "security analyst"), CTO, (CEH, AWS)
    ),
    "Research": Function("research director", ("research scientist", "data scientist"), CTO, (), True),
    "Legal": Function("general counsel", ("paralegal", "contracts manager"), CEO),
    "People Operations": Function(
        "people operations director", ("recruiter", "training coordinator"), COO, (PMP,)
    ),
    "Field Sales": Function("sales director", ("account executive", "sales representative"), COO),
    "Customer Care": Function("customer care manager", ("customer support agent",), COO, (SIX,)),
    "Brand Marketing": Function("marketing director", ("copywriter", "brand strategist"), COO),
    "Procurement": Function("procurement manager", ("procurement officer",), CFO, (SIX, PMP)),
}
INVESTMENT = Function("general partner", ("investment associate",), MANAGING_PARTNER, (CFA,))
PRINCIPAL = "principal consultant"  # the title a replaced team head takes at another firm

# How a person would say what someone with the title does, never using the title's words.
TITLE_PARAPHRASES = {
    CEO: ["runs the whole company", "is the top boss"],
    CFO: ["is in charge of the money", "holds the purse strings"],
    CTO: ["has the final say on the software the firm builds on", "is the most senior engineer"],
    COO: ["keeps the daily business running", "is second in command for day-to-day matters"],
    "internal auditor": ["checks the books", "goes through the accounts looking for irregularities"],
    "software developer": ["writes the code", "programs the backend"],
    "data engineer": ["builds the pipelines that feed the warehouse"],
    "data scientist": ["builds the statistical models", "crunches numbers with machine learning"],
    "site reliability engineer": ["keeps the servers up at night", "is on call when systems go down"],
    "security analyst": ["watches the network for hackers"],
    "quality assurance tester": ["hunts for bugs before a release"],
    "UX designer": ["draws the screens users tap through"],
    "general counsel": ["is the top lawyer", "handles the company's legal affairs"],
    "paralegal": ["prepares case files for the lawyers"],
    "contracts manager": ["drafts and reviews the agreements the firm signs"],
    "recruiter": ["finds new hires"],
    "training coordinator": ["organises courses for new staff"],
    "payroll clerk": ["makes sure everyone gets paid on time"],
    "treasurer": ["looks after the cash reserves"],
    "tax accountant": ["prepares the returns for the revenue authority"],
    "financial analyst": ["builds the revenue forecasts"],
    "account executive": ["closes deals with big customers"],
    "sales representative": ["pitches to shopkeepers door to door"],
    "customer support agent": ["answers the help line"],
    "copywriter": ["comes up with the ad slogans"],
    "brand strategist": ["shapes how the public sees the company"],
    "procurement officer": ["negotiates with suppliers"],
    "research scientist": ["runs the lab experiments"],
    "investment associate": ["screens startups for the partners"],
    MANAGING_PARTNER: ["runs the fund"],
}
CERT_PARAPHRASES = {
    CPA: ["is a licensed CPA", "passed the CPA exam"],
    CFA: ["passed all three CFA levels"],
    CISA: ["holds the CISA credential"],
    AWS: ["has Amazon's cloud badge for planning systems"],
    CSM: ["is qualified to run agile sprints"],
    CEH: ["is licensed to break into systems for clients"],
    SIX: ["is a top-grade expert in process improvement"],
    PMP: ["holds the PMP credential"],
}
DELIVERABLES = {
    "mobile banking app": "software that lets account holders check balances on their phones",
    "payroll system": "software that pays salaries",
    "fraud detection model": "something that flags suspicious transactions",
    "warehouse management system": "software to keep track of stock in storage depots",
    "customer loyalty programme": "a points scheme rewarding repeat shoppers",
    "reporting dashboard": "charts for executives to follow the numbers",
    "solar microgrid": "a small local power network running on sunlight",
    "telehealth platform": "video consultations with doctors",
    "e-commerce storefront": "an online shop",
    "crop yield forecast": "predictions of how much farmers will harvest",
    "fleet tracking system": "GPS monitoring of the delivery trucks",
    "credit scoring engine": "a tool that rates how likely borrowers are to repay",
    "chatbot": "a bot answering clients' typed questions",
    "learning management system": "a portal where students take courses online",
    "cold storage facility": "refrigerated rooms for perishable goods",
}
STATUS_PROSE = {  # how a status reads after "is now"
    "scoping": "being scoped",
    "in development": "in development",
    "user acceptance testing": "in user acceptance testing",
    "live in production": "live in production",
    "on hold": "on hold",
}
STATUS_AFTER = {
    "scoping": "in development",
    "in development": "user acceptance testing",
    "user acceptance testing": "live in production",
    "live in production": "on hold",
}
SERVICES = {  # service: the sector of the firms that usually win it
    "managed server hosting": "cloud hosting",
    "penetration testing": "cybersecurity",
    "consumer surveys": "market research",
    "staff health cover": "insurance",
    "refrigerated transport": "cold-chain logistics",
    "branch refurbishment": "construction",
    "strategy review": "management consulting",
    "import shipping": "freight forwarding",
    "card acquiring": "payments processing",
    "rooftop solar installation": "solar energy",
}
SEGMENTS = [
    "smallholder farmers",
    "corner shops",
    "private clinics",
    "secondary schools",
    "truck fleet owners",
    "market traders",
    "hotel chains",
    "hospital pharmacies",
    "rural cooperatives",
    "freelance tailors",
]

NAMESAKE_FIRSTS = "Rahul Mei Tariq Zanele Kofi Ayesha Joaquin Nia Hiroshi Thabo Priya Farid".split()
OTHER_FIRSTS = """Abena Adebayo Aditi Akosua Alejandro Amani Anan Arjun Asha Aziz Bahati Baraka Bich Camila
Chidi Chinedu Dalia Dumisani Emeka Esi Fatuma Folasade Gabriela Hamza Haruto Hassan Ifeoma Imani Isabela
Jabari Jomo Juma Kagiso Kamal Kana Karim Kavya Kenji Khadija Kiran Kwabena Lakshmi Lerato Lindiwe Luz
Mahlet Malik Mandla Mariam Mateo Mbali Minh Naledi Nadia Nkechi Nomvula Obinna Oluwaseun Omar Paulo Quynh
Rania Ravi Refilwe Rosa Ryo Sadia Sakura Salma Santiago Sanjay Sefa Shreya Sipho Sizwe Sunita Taiwo Takeshi
Tendai Thanh Tomas Tunde Uchenna Valentina Vikram Wanjiru Xochitl Yaw Yemi Yuki Zainab Zuberi Anaya Bongani
Chiamaka Efua Femi Gugu Hana Ikaika Kalani Lwazi Makena Nalani Njeri Ochieng Pita Rangi Sefo Tavita Wairimu
Yohannes Citlali Itzel Nayeli Killa Rumi Sumaq Kusi Anahi Dae Eun Ji Ho Sung Min Aroha Manaia Tevita Losa
Siosaia Ngaio Kiri Anela Keola Mahina Nohea""".split()
SURNAMES = """Asante Okafor Mwangi Nakamura Quispe Tan Nguyen Perera Haddad Banerjee Mensah Achieng Adeyemi
Bello Boateng Chowdhury Dlamini Eze Fofana Gathoni Hossain Iyer Jaramillo Kamau Kariuki Khumalo Kipchoge Le
Mahlangu Mbeki Mendoza Moyo Nair Ndlovu Njoroge Nkosi Nwosu Obi Odhiambo Ogunleye Okeke Omondi Onyango Osei
Otieno Pham Pillai Rao Reddy Sato Sithole Suzuki Takahashi Tshabalala Uwimana Villca Wanjiku Yamamoto Zulu
Agyeman Amponsah Bhatt Chaudhary Condori Darko Desai Ekwueme Gupta Hlongwane Huaman Ibrahim Kapoor Kato Lim
Mamani Mutua Nasser Oduya Patel Qureshi Salazar Shrestha Thapa Tran Vargas Watanabe Yusuf Abubakar Adjei
Dang Effiong Gakuru Hamid Inoue Joshi Kimaro Lwanga Makau Mazibuko Nyambura Ochoa Quansah Rahman Sandoval
Tanaka Umeh Vu Wambua Yadav Zungu Apaza Chambi Huanca Ticona Ayala Lozano Benitez Fonoti Tuilagi Ngata
Parata Kealoha Akana Mahoe Tupou Vaipulu Soliai""".split()
FIRM_PREFIXES = """Nyota Saguaro Rimba Tausi Zuri Halona Anjali Malaika Bagani Lakbay Duma Kalinda Pacari
Jabali Kiboko Waya Sikia Ruwa Mlima Kaya Ixchel Chaska Sabuni Ayllu Bulan Tala Dagat Mawimbi Quetzal Kopje
Sarangi Inti Amaru Yaku Huayna Lumbre Nayra Chasqui Wayra Pachaka""".split()
PROJECT_COLOURS = "Amber Cobalt Saffron Indigo Obsidian Ochre Coral Umber Teal Russet".split()
PROJECT_ANIMALS = "Heron Ibis Okapi Gecko Marlin Tapir Quoll Kudu Oryx Lemur".split()
PRODUCT_HEADS = "Tally Soko Jua Kiva Nimbu Chakra Lumo Pesa Ruta Tanga Mavu Kilo".split()
PRODUCT_TAILS = "Books Pay Track Desk Grid Scan Cart Link Sense Flow".split()

PROFILE_START = datetime(2022, 1, 10, 9, 0, tzinfo=UTC)
PROFILE_SPAN = timedelta(days=530)
CHANGES_START = datetime(2024, 1, 15, 9, 0, tzinfo=UTC)
CHANGES_SPAN = timedelta(days=320)


def article(word: str) -> str:
    if word.startswith(("UX", "user", "uni", "e-")):
        return "a" if not word.startswith("e-") else "an"
    return "an" if word[0].lower() in "aeiou" else "a"


def with_article(title: str) -> str:
    """'the chief financial officer', 'a software developer'."""
    unique = title.startswith(("chief", "general counsel", MANAGING_PARTNER))
    return f"the {title}" if unique else f"{article(title)} {title}"


def listing(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def stems(name: str) -> list[str]:
    """The stems of a name's words that a paraphrase of it must not contain."""
    words = name.lower().replace("-", " ").split()
    return [word[:5] for word in words if len(word) >= 4]


def paraphrase_is_clean(phrase: str, name: str) -> bool:
    return not any(stem in phrase.lower() for stem in stems(name))


# --- the organisation --------------------------------------------------------------------------


@dataclass(eq=False)
class Firm:
    name: str
    prefix: str
    sector: str
    office: str
    branches: list[str] = field(default_factory=list)
    teams: list[Team] = field(default_factory=list)
    is_fund: bool = False

    def kind(self) -> str:
        return "investment firm" if self.is_fund else "company"


@dataclass(eq=False)
class Team:
    name: str
    firm: Firm
    function: str
    head: Person | None = None
    members: list[Person] = field(default_factory=list)

    def spec(self) -> Function | None:
        return INVESTMENT if self.function == "Investment" else FUNCTIONS.get(self.function)


@dataclass(eq=False)
class Person:
    title: str
    team: Team
    manager: Person | None
    cert: str | None = None
    first: str = ""
    surname: str = ""

    @property
    def name(self) -> str:
        return f"{self.first} {self.surname}"

    @property
    def firm(self) -> Firm:
        return self.team.firm


@dataclass
class Project:
    name: str
    client: Firm
    team: Team
    manager: Person
    budget: str
    deliverable: str
    due: str
    status: str
    vendor: Firm | None


@dataclass
class Draft:
    """A text before its moment is known: prose, facts and the names it mentions besides theirs."""

    text: str
    facts: list[Fact]
    mentions: list[str] = field(default_factory=list)


class BusinessWorldBuilder:
    """Builds the organisation, tells it as texts, changes it a year later, then asks about it."""

    def __init__(self, seed: int, scale: float):
        self.rng = random.Random(seed)
        self.scale = scale
        self.info: dict[str, tuple[str, str]] = {}  # entity name -> (type, description)
        self.firms: list[Firm] = []
        self.funds: list[Firm] = []
        self.people: list[Person] = []
        self.projects: list[Project] = []
        self.texts: list[Text] = []
        self.changed: set[tuple[str, str]] = set()  # (subject, relation) restated with a new target
        self.spare_firsts: list[str] = []
        self.taken_names: set[str] = set()

    def count(self, full: int, least: int) -> int:
        return max(least, round(full * self.scale))

    # --- helpers ---

    def fact(self, source: str, relation: str, target: str, when: datetime | None = None) -> Fact:
        sentence = SENTENCES[relation].format(s=source, t=target)
        if relation == "will_deliver":
            sentence = f"{source} will deliver {article(target)} {target}."
        return Fact(source, relation, target, sentence, when)

    def describe(self, name: str, kind: str, description: str = "") -> None:
        known = self.info.get(name)
        if known and known[0] != kind:  # one name, two entities: the world would be ambiguous
            raise ValueError(f"{name!r} is both a {known[0]} and a {kind}")
        self.info[name] = (kind, description)

    def describe_person(self, person: Person) -> None:
        self.describe(person.name, "person", f"{person.title} at {person.firm.name}")

    def entities(self, facts: list[Fact], mentions: list[str]) -> list[dict]:
        names = list(dict.fromkeys([n for f in facts for n in (f.source, f.target)] + mentions))
        return [{"name": n, "type": self.info[n][0], "description": self.info[n][1]} for n in names]

    def publish(self, draft: Draft, when: datetime) -> None:
        entities = self.entities(draft.facts, draft.mentions)
        self.texts.append(Text(draft.text, when, entities, draft.facts))

    # --- geography and firms ---

    def build_geography(self) -> None:
        self.cities = dict(list(CITIES.items())[: self.count(len(CITIES), 3)])
        self.districts = [d for ds in self.cities.values() for d in ds]
        self.city_of = {d: city for city, ds in self.cities.items() for d in ds}
        for city, districts in self.cities.items():
            self.describe(city, "city")
            for district in districts:
                self.describe(district, "district", f"business district of {city}")

    def pick_office(self) -> str:
        return HUB_DISTRICT if self.rng.random() < 0.3 else self.rng.choice(self.districts)

    def new_firm(self, name: str, prefix: str, sector: str, office: str, is_fund: bool = False) -> Firm:
        others = [d for d in self.districts if d != office]
        branches = self.rng.sample(others, self.rng.choice([0, 1, 1, 2]))
        firm = Firm(name, prefix, sector, office, branches, is_fund=is_fund)
        self.describe(name, firm.kind(), f"{sector} {firm.kind()}")
        self.describe(sector, "industry")
        return firm

    def build_firms(self) -> None:
        prefixes = list(FIRM_PREFIXES)
        self.rng.shuffle(prefixes)
        self.hub = self.new_firm("Tembo Meridian Holdings", "Tembo", "payments processing", HUB_DISTRICT)
        self.hub_client = self.new_firm(
            "Kisiwa National Bank", "Kisiwa", "banking", self.rng.choice(self.districts)
        )
        self.firms = [self.hub, self.hub_client]
        sectors = [s for s in SECTORS if s not in ("payments processing", "banking")]
        for index in range(self.count(30, 6) - 2):
            sector = sectors[index % len(sectors)] if index < len(sectors) else self.rng.choice(list(SECTORS))
            prefix = prefixes.pop()
            name = f"{prefix} {self.rng.choice(SECTORS[sector][0])}"
            self.firms.append(self.new_firm(name, prefix, sector, self.pick_office()))
        for _ in range(self.count(6, 2)):
            prefix = prefixes.pop()
            name = f"{prefix} {self.rng.choice(FUND_ENDINGS)}"
            self.funds.append(self.new_firm(name, prefix, FUND_SECTOR, self.pick_office(), is_fund=True))

    # --- teams and people ---

    def new_person(
        self, title: str, team: Team, manager: Person | None, certs: tuple[str, ...] = ()
    ) -> Person:
        cert = self.rng.choice(certs) if certs and self.rng.random() < 0.3 else None
        person = Person(title, team, manager, cert)
        self.people.append(person)
        return person

    def new_team(self, firm: Firm, function: str) -> Team:
        team = Team(f"{firm.prefix} {function}", firm, function)
        firm.teams.append(team)
        self.describe(team.name, "team", f"{function.lower()} team at {firm.name}")
        return team

    def staff_leadership(self, firm: Firm) -> dict[str, Person]:
        team = self.new_team(firm, "Executive Team")
        ceo = self.new_person(CEO, team, None, (PMP,))
        team.head = ceo
        titles = (
            [CFO, CTO, COO] if firm is self.hub else self.rng.sample([CFO, CTO, COO], self.rng.randint(1, 2))
        )
        execs = {CEO: ceo}
        for title in titles:
            execs[title] = self.new_person(title, team, ceo, (CFA,) if title == CFO else ())
            team.members.append(execs[title])
        return execs

    def staff_team(self, firm: Firm, function: str, boss: Person, size: int) -> None:
        team = self.new_team(firm, function)
        spec = team.spec()
        team.head = self.new_person(spec.head, team, boss, spec.certs)
        for _ in range(size):
            team.members.append(self.new_person(self.rng.choice(spec.members), team, team.head, spec.certs))

    def staff_company(self, firm: Firm) -> None:
        execs = self.staff_leadership(firm)
        if firm is self.hub:
            functions = list(FUNCTIONS)[: self.count(len(FUNCTIONS), 3)]
            sizes = [self.count(self.rng.randint(9, 11), 2) for _ in functions]
        else:
            functions = self.rng.sample(list(FUNCTIONS), 2)
            sizes = [self.rng.randint(1, 3) for _ in functions]
        for function, size in zip(functions, sizes, strict=True):
            self.staff_team(firm, function, execs.get(FUNCTIONS[function].boss, execs[CEO]), size)

    def staff_fund(self, fund: Firm) -> None:
        team = self.new_team(fund, "Executive Team")
        team.head = self.new_person(MANAGING_PARTNER, team, None, (CFA,))
        investment = self.new_team(fund, "Investment")
        investment.head = self.new_person(INVESTMENT.head, investment, team.head, INVESTMENT.certs)
        for _ in range(self.rng.randint(1, 2)):
            investment.members.append(
                self.new_person(INVESTMENT.members[0], investment, investment.head, INVESTMENT.certs)
            )

    def name_everyone(self) -> None:
        """First names drawn so that a dozen are shared by about eleven people each."""
        groups = NAMESAKE_FIRSTS[: self.count(len(NAMESAKE_FIRSTS), 3)]
        self.namesake_firsts = set(groups)
        shared = [first for first in groups for _ in range(self.count(11, 3))]
        others = list(OTHER_FIRSTS)
        self.rng.shuffle(others)
        needed = len(self.people) - len(shared)
        pool = shared + (others * 3)[:needed]
        self.spare_firsts = others[: self.count(20, 4)]
        self.rng.shuffle(pool)
        for person, first in zip(self.people, pool, strict=True):
            self.give_name(person, first)

    def give_name(self, person: Person, first: str) -> None:
        surnames = [s for s in SURNAMES if f"{first} {s}" not in self.taken_names]
        person.first, person.surname = first, self.rng.choice(surnames)
        self.taken_names.add(person.name)
        self.describe_person(person)
        self.describe(person.title, "job title")
        if person.cert:
            self.describe(person.cert, "certification")

    # --- projects, contracts, products ---

    def unique_name(self, make) -> str:
        while True:
            name = make()
            if name not in self.info:
                return name

    def build_projects(self) -> None:
        managers: set[int] = set()
        companies = self.firms
        for _ in range(self.count(60, 6)):
            firm = self.hub if self.rng.random() < 0.25 else self.rng.choice(companies)
            team = self.rng.choice([t for t in firm.teams if t.function != "Executive Team"])
            free = [p for p in [*team.members, team.head] if id(p) not in managers]
            if not free:
                continue
            manager = free[0] if self.rng.random() < 0.2 else self.rng.choice(free)
            managers.add(id(manager))
            self.projects.append(self.new_project(team, manager))

    def new_project(self, team: Team, manager: Person) -> Project:
        rng = self.rng
        others = [f for f in self.firms if f is not team.firm]
        client = (
            self.hub_client if team.firm is not self.hub_client and rng.random() < 0.3 else rng.choice(others)
        )
        vendors = [f for f in others if f is not client]
        name = self.unique_name(
            lambda: f"Project {rng.choice(PROJECT_COLOURS)} {rng.choice(PROJECT_ANIMALS)}"
        )
        project = Project(
            name=name,
            client=client,
            team=team,
            manager=manager,
            budget=f"${rng.randint(3, 120) / 10:.1f} million",
            deliverable=rng.choice(list(DELIVERABLES)),
            due=f"Q{rng.randint(1, 4)} {rng.choice([2025, 2025, 2026])}",
            status=rng.choice(["scoping", "in development", "in development"]),
            vendor=rng.choice(vendors) if rng.random() < 0.6 else None,
        )
        self.describe(name, "project", f"project for {client.name}")
        for value, kind in [
            (project.budget, "amount"),
            (project.deliverable, "deliverable"),
            (project.due, "date"),
        ]:
            self.describe(value, kind)
        self.describe(project.status, "project status")
        return project

    # --- telling the profiles (2022 to mid 2023) ---

    def city_guides(self) -> list[Draft]:
        drafts = []
        for city, districts in self.cities.items():
            opener = self.rng.choice(
                [
                    f"Business guide to {city}: most firms keep their offices in {listing(districts)}.",
                    f"Where to rent office space in {city}? The districts of {listing(districts)} are busiest.",
                ]
            )
            closing = f" All of them are districts of {city}, within a short ride of each other."
            drafts.append(Draft(opener + closing, [self.fact(d, "part_of_city", city) for d in districts]))
        return drafts

    def firm_profile(self, firm: Firm) -> list[Draft]:
        city = self.city_of[firm.office]
        facts = [
            self.fact(firm.name, "operates_in_sector", firm.sector),
            self.fact(firm.name, "has_main_office_in", firm.office),
        ]
        text = self.rng.choice(
            [
                f"{firm.name} is {article(firm.sector)} {firm.sector} {firm.kind()} with its main office in "
                f"{firm.office}, {city}.",
                f"Company profile: {firm.name} works in {firm.sector}. Its main office is in {firm.office} ({city}).",
            ]
        )
        if firm.branches:
            facts += [self.fact(firm.name, "runs_branch_in", b) for b in firm.branches]
            text += f" It also runs {'a branch' if len(firm.branches) == 1 else 'branches'} in {listing(firm.branches)}."
        teams = [t.name for t in firm.teams]
        facts += [self.fact(t, "unit_of", firm.name) for t in teams[:5]]
        text += f" Its units include {listing(teams[:5])}."
        drafts = [Draft(text, facts)]
        for start in range(5, len(teams), 5):
            part = teams[start : start + 5]
            more = f"{firm.name} org chart, continued: {listing(part)} are also units of {firm.name}."
            drafts.append(Draft(more, [self.fact(t, "unit_of", firm.name) for t in part]))
        return drafts

    def person_facts(self, person: Person) -> list[Fact]:
        facts = [
            self.fact(person.name, "employed_by", person.firm.name),
            self.fact(person.name, "holds_title", person.title),
            self.fact(person.name, "member_of_team", person.team.name),
        ]
        if person.manager:
            facts.append(self.fact(person.name, "answers_to", person.manager.name))
        if person.cert:
            facts.append(self.fact(person.name, "certified_as", person.cert))
        return facts

    def person_line(self, person: Person) -> str:
        p, firm, team, title = person.name, person.firm.name, person.team.name, person.title
        if person.manager is None:
            line = f"{p} is {with_article(title)} of {firm} and sits on the {team}."
        else:
            m = person.manager.name
            line = self.rng.choice(
                [
                    f"{p} is {with_article(title)} in {team} at {firm} and reports to {m}.",
                    f"{p} works for {firm} as {with_article(title)}; {person.first} sits in {team} and reports "
                    f"to {m}.",
                    f"{p} joined {team} at {firm} as {with_article(title)}, reporting to {m}.",
                ]
            )
        if person.cert:
            line += self.rng.choice(
                [
                    f" {person.first} is certified as {person.cert}.",
                    f" {person.first} earned the {person.cert} certification last year.",
                ]
            )
        return line

    def staff_notes(self, team: Team) -> list[Draft]:
        people = [team.head, *team.members]
        drafts = []
        while people:
            size = self.rng.choice([1, 2, 3, 3])
            group, people = people[:size], people[size:]
            header = self.rng.choice(
                [
                    f"Staff note from {team.name}.",
                    f"{team.firm.name} people update.",
                    f"Intranet post, {team.firm.name}: meet the people of {team.name}.",
                ]
            )
            lines = " ".join(self.person_line(p) for p in group)
            facts = [f for p in group for f in self.person_facts(p)]
            drafts.append(Draft(f"{header} {lines}", facts))
        return drafts

    def takeovers(self) -> list[Draft]:
        candidates = [f for f in self.firms if f not in (self.hub, self.hub_client)]
        self.rng.shuffle(candidates)
        n = min(self.count(10, 2), len(candidates) // 2)
        targets, rest = candidates[:n], [*candidates[n:], self.hub, self.hub_client]
        drafts = []
        for target in targets:
            buyer = self.rng.choice(rest).name
            text = self.rng.choice(
                [
                    f"Deal news: {buyer} took over {target.name} this quarter. {target.name} keeps its brand "
                    f"and staff.",
                    f"{buyer} has completed its takeover of {target.name}, its chief executive told reporters.",
                ]
            )
            drafts.append(Draft(text, [self.fact(buyer, "took_over", target.name)]))
        return drafts

    def investments(self) -> list[Draft]:
        startups = [f for f in self.firms if f not in (self.hub, self.hub_client)]
        drafts = []
        for startup in self.rng.sample(startups, min(self.count(20, 3), len(startups))):
            backers = self.rng.sample(self.funds, self.rng.choice([1, 1, 2]) if len(self.funds) > 1 else 1)
            names = [b.name for b in backers]
            text = self.rng.choice(
                [
                    f"Funding news: {startup.name} closed a new round. {listing(names)} invested in the company.",
                    f"{startup.name} has raised fresh capital; {listing(names)} invested in it.",
                ]
            )
            drafts.append(Draft(text, [self.fact(n, "invested_in", startup.name) for n in names]))
        return drafts

    def board_seats(self) -> list[Draft]:
        leaders = [p for p in self.people if p.team.function == "Executive Team"]
        drafts, seats = [], set()
        for person in self.rng.sample(leaders, min(self.count(15, 2), len(leaders))):
            other = self.rng.choice([f for f in self.firms if f is not person.firm])
            if (person.name, other.name) in seats:
                continue
            seats.add((person.name, other.name))
            text = (
                f"{person.name}, {person.title} of {person.firm.name}, has taken a seat on the board of "
                f"{other.name}. The appointment runs for three years."
            )
            drafts.append(
                Draft(text, [self.fact(person.name, "on_board_of", other.name)], [person.firm.name])
            )
        return drafts

    def project_kickoff(self, project: Project) -> Draft:
        p = project
        facts = [
            self.fact(p.name, "commissioned_by", p.client.name),
            self.fact(p.name, "staffed_by_team", p.team.name),
            self.fact(p.manager.name, "manages_project", p.name),
            self.fact(p.name, "has_budget", p.budget),
            self.fact(p.name, "will_deliver", p.deliverable),
            self.fact(p.name, "due_by", p.due),
            self.fact(p.name, "has_status", p.status),
        ]
        text = self.rng.choice(
            [
                f"Project kickoff: {p.name} was commissioned by {p.client.name}. {p.team.name} is staffing it, "
                f"and {p.manager.name} manages the project. It has a budget of {p.budget} and will deliver "
                f"{article(p.deliverable)} {p.deliverable} by {p.due}.",
                f"{p.client.name} commissioned {p.name}, which will deliver {article(p.deliverable)} "
                f"{p.deliverable}. Budget: {p.budget}; due by {p.due}. The work is staffed by {p.team.name}, "
                f"with {p.manager.name} managing it.",
            ]
        )
        if p.vendor:
            facts.append(self.fact(p.name, "subcontracted_to", p.vendor.name))
            text += f" Part of the work is subcontracted to {p.vendor.name}."
        text += f" Current status: {p.status}."
        return Draft(text, facts)

    def contracts(self) -> list[Draft]:
        drafts = []
        for _ in range(self.count(25, 3)):
            client = self.hub_client if self.rng.random() < 0.3 else self.rng.choice(self.firms)
            service = self.rng.choice(list(SERVICES))
            fitting = [f for f in self.firms if f.sector == SERVICES[service] and f is not client]
            vendor = self.rng.choice(fitting or [f for f in self.firms if f is not client])
            code = self.unique_name(
                lambda c=client: f"Contract {c.prefix[:3].upper()}-{self.rng.randint(1000, 9999)}"
            )
            value = f"${self.rng.randint(40, 2400) * 1000:,}"
            for name, kind in [(code, "contract"), (service, "service"), (value, "amount")]:
                self.describe(name, kind, f"contract issued by {client.name}" if kind == "contract" else "")
            facts = [
                self.fact(code, "issued_by", client.name),
                self.fact(code, "awarded_to", vendor.name),
                self.fact(code, "valued_at", value),
                self.fact(code, "covers_service", service),
            ]
            text = self.rng.choice(
                [
                    f"Press release: {client.name} issued {code} for {service}. The contract, valued at {value}, "
                    f"was awarded to {vendor.name} after an open tender.",
                    f"Tender results: {code} ({service}), issued by {client.name}, was awarded to {vendor.name}. "
                    f"It is valued at {value}.",
                ]
            )
            drafts.append(Draft(text, facts))
        return drafts

    def products(self) -> list[Draft]:
        teams = [t for f in self.firms for t in f.teams if t.spec() and t.spec().ships]
        drafts = []
        for _ in range(self.count(25, 3)):
            team = self.rng.choice(teams)
            name = self.unique_name(lambda: self.rng.choice(PRODUCT_HEADS) + self.rng.choice(PRODUCT_TAILS))
            price = self.rng.choice(
                [f"${self.rng.randint(3, 60)} per month", f"${self.rng.randint(2, 25)} per user per month"]
            )
            segment = self.rng.choice(SEGMENTS)
            for value, kind, description in [
                (name, "product", f"product of {team.firm.name}"),
                (price, "price", ""),
                (segment, "customer segment", ""),
            ]:
                self.describe(value, kind, description)
            facts = [
                self.fact(team.name, "ships_product", name),
                self.fact(name, "sells_for", price),
                self.fact(name, "aimed_at", segment),
            ]
            text = self.rng.choice(
                [
                    f"Launch: {team.name} at {team.firm.name} ships {name}, a tool aimed at {segment}. It sells "
                    f"for {price}.",
                    f"{name} is out. Aimed at {segment} and selling for {price}, it is shipped by {team.name}.",
                ]
            )
            drafts.append(Draft(text, facts, [team.firm.name]))
        return drafts

    def profile_drafts(self) -> list[Draft]:
        drafts = self.city_guides()
        for firm in self.firms + self.funds:
            drafts += self.firm_profile(firm)
            for team in firm.teams:
                drafts += self.staff_notes(team)
        drafts += (
            self.takeovers() + self.investments() + self.board_seats() + self.contracts() + self.products()
        )
        drafts += [self.project_kickoff(p) for p in self.projects]
        return drafts

    def tell_profiles(self) -> None:
        drafts = self.profile_drafts()
        self.rng.shuffle(drafts)
        step = PROFILE_SPAN / len(drafts)
        for index, draft in enumerate(drafts):
            self.publish(draft, PROFILE_START + step * index)

    # --- the changes (2024) ---

    def unchanged(self, person: Person, *relations: str) -> bool:
        return not any((person.name, r) in self.changed for r in relations)

    def plain_members(self) -> list[Person]:
        return [
            p
            for p in self.people
            if p.manager and p.team.head is not p and p.team.function != "Executive Team"
        ]

    def restate(self, source: str, relation: str, target: str, when: datetime) -> Fact:
        self.changed.add((source, relation))
        return self.fact(source, relation, target, when)

    def promote(self, when: datetime) -> Draft | None:
        candidates = [p for p in self.plain_members() if self.unchanged(p, "holds_title") and p.team.spec()]
        if not candidates:
            return None
        person = self.rng.choice(candidates)
        person.title = f"senior {person.title}"
        self.describe(person.title, "job title")
        self.describe_person(person)
        text = self.rng.choice(
            [
                f"Congratulations to {person.name} of {person.team.name}, promoted to {person.title} at "
                f"{person.firm.name} from {when:%B %Y}.",
                f"Promotion round at {person.firm.name}: {person.name} now holds the title of {person.title}.",
            ]
        )
        return Draft(text, [self.restate(person.name, "holds_title", person.title, when)], [person.firm.name])

    def move_within_firm(self, when: datetime) -> Draft | None:
        moves = [
            (p, t)
            for p in self.plain_members()
            if self.unchanged(p, "member_of_team", "answers_to", "employed_by")
            for t in p.firm.teams
            if t is not p.team and t.spec() and p.title in t.spec().members
        ]
        if not moves:
            return None
        person, team = self.rng.choice(moves)
        old = person.team.name
        self.place(person, team)
        text = self.rng.choice(
            [
                f"Team change at {person.firm.name}: {person.name} has moved from {old} to {team.name} and now "
                f"reports to {team.head.name}.",
                f"{person.name} left {old} for {team.name} this month; {team.head.name} is {person.first}'s new "
                f"manager.",
            ]
        )
        facts = [
            self.restate(person.name, "member_of_team", team.name, when),
            self.restate(person.name, "answers_to", team.head.name, when),
        ]
        return Draft(text, facts, [person.firm.name, old])

    def place(self, person: Person, team: Team) -> None:
        person.team.members.remove(person)
        team.members.append(person)
        person.team, person.manager = team, team.head
        self.describe_person(person)

    def change_jobs(self, when: datetime) -> Draft | None:
        moves = [
            (p, t)
            for p in self.plain_members()
            if self.unchanged(p, "member_of_team", "answers_to", "employed_by")
            for f in self.firms
            if f is not p.firm
            for t in f.teams
            if t.spec() and p.title in t.spec().members
        ]
        if not moves:
            return None
        person, team = self.rng.choice(moves)
        old = person.firm.name
        self.place(person, team)
        text = self.rng.choice(
            [
                f"{person.name} has left {old} and joined {team.firm.name}, where {person.first} joins the {team.name} "
                f"team and reports to {team.head.name}.",
                f"New hire at {team.firm.name}: {person.name}, formerly of {old}, works for {team.firm.name} "
                f"now, in {team.name} under {team.head.name}.",
            ]
        )
        facts = [
            self.restate(person.name, "employed_by", team.firm.name, when),
            self.restate(person.name, "member_of_team", team.name, when),
            self.restate(person.name, "answers_to", team.head.name, when),
        ]
        return Draft(text, facts, [old])

    def replace_head(self, when: datetime) -> list[Draft]:
        """A new head for a team: hired, the members re-pointed to them; the old head leaves for another
        firm as a principal consultant."""
        teams = [
            t
            for f in self.firms
            for t in f.teams
            if t.function != "Executive Team"
            and len(t.members) >= 2
            and self.unchanged(t.head, "holds_title")
        ]
        if not teams or not self.spare_firsts:
            return []
        team = self.rng.choice(teams)
        old = team.head
        new = Person(old.title, team, old.manager)
        self.give_name(new, self.spare_firsts.pop())
        self.people.append(new)
        team.head = new
        members = list(team.members)
        for member in members:
            member.manager = new
        self.changed.update({(new.name, "holds_title"), (new.name, "member_of_team")})
        text = (
            f"{team.firm.name} has appointed {new.name} as {new.title} of {team.name}. {new.first} reports to "
            f"{new.manager.name}. From {when:%d %B %Y}, {listing([m.name for m in members])} report to {new.name}."
        )
        facts = self.person_facts(new) + [self.restate(m.name, "answers_to", new.name, when) for m in members]
        return [Draft(text, facts, [old.name]), self.old_head_leaves(old, team, when + timedelta(hours=2))]

    def old_head_leaves(self, old: Person, former: Team, when: datetime) -> Draft:
        team = self.rng.choice([t for f in self.firms if f is not former.firm for t in f.teams if t.spec()])
        old.title = PRINCIPAL
        self.describe(PRINCIPAL, "job title")
        former.members = [m for m in former.members if m is not old]
        team.members.append(old)
        old.team, old.manager = team, team.head
        self.describe_person(old)
        text = (
            f"After years heading {former.name}, {old.name} has joined {team.firm.name} as {with_article(PRINCIPAL)}"
            f" in {team.name}, reporting to {team.head.name}."
        )
        facts = [
            self.restate(old.name, "employed_by", team.firm.name, when),
            self.restate(old.name, "holds_title", PRINCIPAL, when),
            self.restate(old.name, "member_of_team", team.name, when),
            self.restate(old.name, "answers_to", team.head.name, when),
        ]
        return Draft(text, facts, [former.name])

    def move_office(self, when: datetime) -> Draft | None:
        firms = [f for f in self.firms + self.funds if (f.name, "has_main_office_in") not in self.changed]
        if not firms:
            return None
        firm = self.rng.choice(firms)
        old = firm.office
        firm.office = self.rng.choice([d for d in self.districts if d != old and d not in firm.branches])
        text = self.rng.choice(
            [
                f"{firm.name} has moved its main office from {old} to {firm.office} in {self.city_of[firm.office]}.",
                f"New address: from {when:%B %Y}, the main office of {firm.name} is in {firm.office}; the old "
                f"premises in {old} are closed.",
            ]
        )
        return Draft(text, [self.restate(firm.name, "has_main_office_in", firm.office, when)], [old])

    def update_status(self, when: datetime) -> Draft | None:
        projects = [p for p in self.projects if (p.name, "has_status") not in self.changed]
        if not projects:
            return None
        project = self.rng.choice(projects)
        old, project.status = project.status, STATUS_AFTER[project.status]
        self.describe(project.status, "project status")
        text = self.rng.choice(
            [
                f"Status update on {project.name}: the project was {STATUS_PROSE[old]} and its status is now "
                f"{project.status}.",
                f"Steering committee, {project.client.name}: {project.name} is now {STATUS_PROSE[project.status]}"
                f" (it was {STATUS_PROSE[old]}).",
            ]
        )
        mentions = [project.client.name, old]
        return Draft(text, [self.restate(project.name, "has_status", project.status, when)], mentions)

    def change_plan(self) -> list[str]:
        plan = (
            ["promote"] * self.count(40, 5)
            + ["move_within_firm"] * self.count(22, 3)
            + ["change_jobs"] * self.count(10, 2)
            + ["replace_head"] * self.count(6, 1)
            + ["move_office"] * self.count(8, 2)
            + ["update_status"] * self.count(25, 3)
        )
        self.rng.shuffle(plan)
        return plan

    def tell_changes(self) -> None:
        plan = self.change_plan()
        step = CHANGES_SPAN / len(plan)
        for index, kind in enumerate(plan):
            when = CHANGES_START + step * index
            outcome = getattr(self, kind)(when)
            drafts = outcome if isinstance(outcome, list) else [outcome] if outcome else []
            for offset, draft in enumerate(drafts):
                self.publish(draft, when + timedelta(hours=2 * offset))

    def build(self) -> World:
        self.build_geography()
        self.build_firms()
        for firm in self.firms:
            self.staff_company(firm)
        for fund in self.funds:
            self.staff_fund(fund)
        self.name_everyone()
        self.build_projects()
        self.tell_profiles()
        self.tell_changes()
        asker = QuestionWriter(self.rng, self.scale, FactIndex(self.texts), self)
        return World(self.texts, asker.all_questions(), functional=FUNCTIONAL)


# --- the stored state, as the texts tell it ------------------------------------------------------


class FactIndex:
    """The facts in force after all texts: a newer target of a functional relation supersedes."""

    def __init__(self, texts: list[Text]):
        self.current: dict[tuple[str, str], dict[str, Fact]] = defaultdict(dict)
        self.superseded: set[tuple[str, str]] = set()
        for text in sorted(texts, key=lambda t: t.reference_time):
            for fact in text.facts:
                slot = self.current[fact.source, fact.relation]
                if fact.relation in FUNCTIONAL and any(t != fact.target for t in slot):
                    slot.clear()
                    self.superseded.add((fact.source, fact.relation))
                slot[fact.target] = fact
        self.into: dict[tuple[str, str], list[str]] = defaultdict(list)
        for (source, relation), targets in self.current.items():
            for target in targets:
                self.into[target, relation].append(source)

    def only_target(self, source: str, relation: str) -> str | None:
        targets = list(self.current.get((source, relation), {}))
        return targets[0] if len(targets) == 1 else None

    def only_source(self, target: str, relation: str) -> str | None:
        sources = self.into.get((target, relation), [])
        return sources[0] if len(sources) == 1 else None

    def subjects(self, relation: str) -> list[str]:
        return sorted({s for (s, r), targets in self.current.items() if r == relation and targets})

    def objects(self, relation: str) -> list[str]:
        return sorted({t for (t, r) in self.into if r == relation})

    def follow(self, entity: str, relation: str, forward: bool) -> tuple[str, tuple[str, str, str]] | None:
        """(the next entity, the fact) of one hop, when the hop has exactly one fact."""
        other = self.only_target(entity, relation) if forward else self.only_source(entity, relation)
        if other is None:
            return None
        return other, ((entity, relation, other) if forward else (other, relation, entity))

    def chain(self, start: str, hops: list[tuple[str, bool]]) -> list[tuple[str, str, str]] | None:
        facts, entity, seen = [], start, {start}
        for relation, forward in hops:
            step = self.follow(entity, relation, forward)
            if step is None or step[0] in seen:
                return None
            entity = step[0]
            seen.add(entity)
            facts.append(step[1])
        return facts


# --- the questions -------------------------------------------------------------------------------

# relation: (asks for the target, given the source?, templates with {x})
DIRECT = {
    "employed_by": (True, ["Which company is {x} employed by?", "Who employs {x}?"]),
    "holds_title": (True, ["What title does {x} hold?", "What is the job title of {x}?"]),
    "member_of_team": (True, ["Which team is {x} a member of?"]),
    "answers_to": (True, ["Who does {x} report to?"]),
    "certified_as": (True, ["What is {x} certified as?"]),
    "manages_project": (True, ["Which project does {x} manage?"]),
    "commissioned_by": (True, ["Who commissioned {x}?", "Which client commissioned {x}?"]),
    "has_budget": (True, ["What budget does {x} have?", "What is the budget of {x}?"]),
    "will_deliver": (True, ["What will {x} deliver?"]),
    "subcontracted_to": (True, ["Which firm is {x} subcontracted to?"]),
    "staffed_by_team": (True, ["Which team is {x} staffed by?"]),
    "due_by": (True, ["When is {x} due?"]),
    "took_over": (False, ["Which company took over {x}?"]),
    "has_main_office_in": (True, ["In which district does {x} have its main office?"]),
    "operates_in_sector": (True, ["Which sector does {x} operate in?"]),
    "invested_in": (False, ["Which fund invested in {x}?"]),
    "awarded_to": (True, ["Which firm was {x} awarded to?"]),
    "valued_at": (True, ["What is {x} valued at?"]),
    "ships_product": (False, ["Which team ships {x}?"]),
    "sells_for": (True, ["What does {x} sell for?"]),
    "aimed_at": (True, ["Who is {x} aimed at?"]),
    "part_of_city": (True, ["Which city is {x} a district of?"]),
    "on_board_of": (True, ["Which company's board does {x} sit on?"]),
}
PARAPHRASED = {
    "employed_by": (True, ["Which outfit pays {x}'s salary?", "Where does {x} earn a living?"]),
    "answers_to": (True, ["Who is {x}'s boss?", "Who sits directly above {x} in the hierarchy?"]),
    "holds_title": (True, ["What position does {x} have?", "What does {x} do for a living?"]),
    "member_of_team": (True, ["Which group does {x} belong to at work?"]),
    "has_budget": (True, ["How much money has been set aside for {x}?"]),
    "commissioned_by": (True, ["Which customer is paying for {x}?", "Who ordered {x}?"]),
    "will_deliver": (True, ["What is {x} supposed to produce?"]),
    "subcontracted_to": (True, ["Which outside supplier was brought in on {x}?"]),
    "took_over": (False, ["Who bought {x}?", "Which company swallowed up {x}?"]),
    "operates_in_sector": (True, ["What line of business is {x} in?"]),
    "invested_in": (False, ["Who put money into {x}?"]),
    "has_main_office_in": (True, ["Where is {x}'s headquarters?"]),
    "awarded_to": (True, ["Which supplier won {x}?"]),
    "valued_at": (True, ["How much money is {x} worth?"]),
    "sells_for": (True, ["How much does {x} cost?"]),
    "ships_product": (False, ["Who builds {x}?"]),
    "due_by": (True, ["What's the deadline for {x}?"]),
    "manages_project": (True, ["What project is {x} in charge of?"]),
    "certified_as": (True, ["Which credential has {x} earned?"]),
}
CURRENT = {
    "holds_title": ["What is {x}'s job title now?", "What position does {x} hold today?"],
    "answers_to": ["Who does {x} report to now?", "Who is {x}'s manager at present?"],
    "member_of_team": ["Which team is {x} on now?", "What team does {x} belong to these days?"],
    "employed_by": ["Which company does {x} work for now?", "Who employs {x} at the moment?"],
    "has_main_office_in": [
        "Where is {x}'s main office now?",
        "In which district is {x}'s head office today?",
    ],
    "has_status": ["What is the current status of {x}?", "Where does {x} stand now?"],
}
F, B = True, False  # a hop forward (subject to object) or backward
TWO_HOPS = [
    (
        [("took_over", B), ("has_main_office_in", F)],
        [
            "In which district does the company that took over {x} have its main office?",
            "Where is the head office of the firm that bought {x}?",
        ],
    ),
    (
        [("has_main_office_in", F), ("part_of_city", F)],
        ["Which city is {x}'s main office in?", "In what city does {x} keep its head office?"],
    ),
    (
        [("manages_project", F), ("commissioned_by", F)],
        ["Which client is the project managed by {x} for?", "Who commissioned the project {x} manages?"],
    ),
    (
        [("answers_to", F), ("holds_title", F)],
        ["What is the job title of {x}'s manager?", "What position does the person {x} reports to hold?"],
    ),
    (
        [("answers_to", F), ("answers_to", F)],
        ["Who is {x}'s manager's manager?", "Who does {x}'s boss report to?"],
    ),
    ([("member_of_team", F), ("ships_product", F)], ["Which product does {x}'s team ship?"]),
    (
        [("subcontracted_to", F), ("operates_in_sector", F)],
        [
            "What sector is the subcontractor on {x} in?",
            "In which industry does the firm subcontracted on {x} work?",
        ],
    ),
    ([("commissioned_by", F), ("operates_in_sector", F)], ["What industry is the client of {x} in?"]),
    (
        [("awarded_to", F), ("has_main_office_in", F)],
        ["In which district is the main office of the firm that won {x}?"],
    ),
    (
        [("ships_product", B), ("unit_of", F)],
        ["Which company's team ships {x}?", "Which firm is behind {x}?"],
    ),
    ([("staffed_by_team", F), ("unit_of", F)], ["Which company does the team staffing {x} belong to?"]),
    (
        [("manages_project", F), ("has_budget", F)],
        ["What is the budget of the project {x} manages?", "How big is the budget of {x}'s project?"],
    ),
    (
        [("invested_in", B), ("has_main_office_in", F)],
        ["Where is the main office of the fund that invested in {x}?"],
    ),
    (
        [("employed_by", F), ("operates_in_sector", F)],
        ["What sector is {x}'s employer in?", "In which industry does the company employing {x} operate?"],
    ),
]
THREE_HOPS = [
    (
        [("manages_project", F), ("commissioned_by", F), ("has_main_office_in", F)],
        [
            "In which district sits the office of the client of the project {x} manages?",
            "Where is the main office of the customer behind {x}'s project?",
        ],
    ),
    (
        [("took_over", B), ("has_main_office_in", F), ("part_of_city", F)],
        [
            "In which city is the firm that took over {x} based?",
            "{x} was bought by another company; which city is that company's head office in?",
        ],
    ),
    (
        [("employed_by", F), ("has_main_office_in", F), ("part_of_city", F)],
        [
            "In which city does {x}'s employer have its main office?",
            "Which city is the head office of the company {x} works for in?",
        ],
    ),
    (
        [("answers_to", F), ("answers_to", F), ("holds_title", F)],
        [
            "What title does {x}'s manager's manager hold?",
            "What is the job of the person two levels above {x}?",
        ],
    ),
    (
        [("member_of_team", F), ("ships_product", F), ("sells_for", F)],
        ["How much does the product of {x}'s team sell for?"],
    ),
    (
        [("subcontracted_to", F), ("has_main_office_in", F), ("part_of_city", F)],
        ["Which city is the subcontractor on {x} based in?"],
    ),
    (
        [("ships_product", B), ("unit_of", F), ("has_main_office_in", F)],
        ["In which district is the main office of the company whose team ships {x}?"],
    ),
    (
        [("manages_project", F), ("commissioned_by", F), ("operates_in_sector", F)],
        [
            "What sector is the client of {x}'s project in?",
            "What business is the customer of {x}'s project in?",
        ],
    ),
    (
        [("awarded_to", F), ("has_main_office_in", F), ("part_of_city", F)],
        ["In which city is the winner of {x} based?"],
    ),
    (
        [("staffed_by_team", F), ("unit_of", F), ("has_main_office_in", F)],
        ["Where is the main office of the company whose team staffs {x}?"],
    ),
    (
        [("member_of_team", F), ("unit_of", F), ("operates_in_sector", F)],
        ["What industry is the company of {x}'s team in?"],
    ),
]
UNANSWERABLE = [
    "Who is the chief sustainability officer at {hub}?",
    "Which company took over {client}?",
    "What was the budget of Project Vermilion Narwhal?",
    "Which office does {hub} run in Montevideo?",
    "Who chairs the board of Ilanga Brewing Cooperative?",
    "Which fund invested in {hub}?",
]
COUNTS = {
    "direct": 20,
    "paraphrased": 15,
    "current_state": 15,
    "namesake": 10,
    "multi_hop": 30,
    "multi_hop_3": 30,
    "paraphrased_role": 30,
    "unanswerable": 5,
}


def base_title(title: str) -> str:
    return title.removeprefix("senior ")


class QuestionWriter:
    """The questions of each category, drawn from the facts in force at the end."""

    def __init__(self, rng: random.Random, scale: float, index: FactIndex, world: BusinessWorldBuilder):
        self.rng, self.scale, self.index, self.world = rng, scale, index, world
        self.asked: set[str] = set()

    def wanted(self, category: str) -> int:
        return max(4, round(COUNTS[category] * self.scale))

    def question(
        self, category: str, template: str, gold: list[tuple[str, str, str]], **names
    ) -> Question | None:
        text = re.sub(r"s's\b", "s'", template.format(**names))  # "Huayna Stores' office"
        if text in self.asked:
            return None
        self.asked.add(text)
        return Question(category, text, gold)

    def take(self, category: str, makers: list) -> list[Question]:
        """Round-robin over question makers (each a generator of questions) until enough are made."""
        questions: list[Question] = []
        live = list(makers)
        while live and len(questions) < self.wanted(category):
            for maker in list(live):
                made = next(maker, None)
                if made is None:
                    live.remove(maker)
                elif len(questions) < self.wanted(category):
                    questions.append(made)
        return questions

    def shuffled(self, items) -> list:
        items = list(items)
        self.rng.shuffle(items)
        return items

    # --- one fact ---

    def one_fact(self, category: str, relation: str, forward: bool, templates: list[str]):
        starts = self.index.subjects(relation) if forward else self.index.objects(relation)
        for start in self.shuffled(starts):
            if forward and (start, relation) in self.index.superseded:
                continue
            step = self.index.follow(start, relation, forward)
            if step:
                made = self.question(category, self.rng.choice(templates), [step[1]], x=start)
                if made:
                    yield made

    def single_facts(self, category: str, table: dict) -> list[Question]:
        makers = [self.one_fact(category, r, fw, tpl) for r, (fw, tpl) in self.shuffled(table.items())]
        return self.take(category, makers)

    def current_state(self) -> list[Question]:
        by_relation = defaultdict(list)
        for source, relation in self.index.superseded:
            by_relation[relation].append(source)
        makers = [self.changed_facts(r, sorted(sources)) for r, sources in sorted(by_relation.items())]
        return self.take("current_state", self.shuffled(makers))

    def changed_facts(self, relation: str, sources: list[str]):
        for source in self.shuffled(sources):
            target = self.index.only_target(source, relation)
            made = self.question(
                "current_state", self.rng.choice(CURRENT[relation]), [(source, relation, target)], x=source
            )
            if made:
                yield made

    # --- chains ---

    def chains(self, category: str, hops: list[tuple[str, bool]], templates: list[str]):
        relation, forward = hops[0]
        starts = self.index.subjects(relation) if forward else self.index.objects(relation)
        for start in self.shuffled(starts):
            gold = self.index.chain(start, hops)
            if gold:
                made = self.question(category, self.rng.choice(templates), gold, x=start)
                if made:
                    yield made

    def multi_hop(self, category: str, shapes: list) -> list[Question]:
        return self.take(category, self.shuffled([self.chains(category, h, t) for h, t in shapes]))

    # --- namesakes and paraphrased roles ---

    def namesake_groups(self) -> dict[str, list[Person]]:
        groups = defaultdict(list)
        for person in self.world.people:
            if person.first in self.world.namesake_firsts:
                groups[person.first].append(person)
        return groups

    def gold_of(self, person: Person, *relations: str) -> list[tuple[str, str, str]] | None:
        gold = [(person.name, r, self.index.only_target(person.name, r)) for r in relations]
        return None if any(t is None for _, _, t in gold) else gold

    def among_namesakes(self, attribute, templates: list[str], relations: tuple[str, ...], category: str):
        """Questions naming a first name and an attribute (`attribute(person)`: (its words, its value)
        or None) that no namesake shares."""
        people = [p for group in self.namesake_groups().values() for p in group]
        groups = self.namesake_groups()
        for person in self.shuffled(people):
            described = attribute(person)
            if not described:
                continue
            words, value = described
            if (
                sum(1 for other in groups[person.first] if attribute(other) and attribute(other)[1] == value)
                != 1
            ):
                continue
            gold = self.gold_of(person, *relations)
            if gold:
                made = self.question(
                    category, self.rng.choice(templates), gold, first=person.first, attr=words
                )
                if made:
                    yield made

    def certified(self, person: Person):
        cert = self.index.only_target(person.name, "certified_as")
        return (self.rng.choice(CERT_PARAPHRASES[cert]), cert) if cert else None

    def manages(self, person: Person):
        project = self.index.only_target(person.name, "manages_project")
        return (project, project) if project else None

    def on_team(self, person: Person):
        team = self.index.only_target(person.name, "member_of_team")
        return (team, team) if team else None

    def at_firm(self, person: Person):
        firm = self.index.only_target(person.name, "employed_by")
        return (firm, firm) if firm else None

    def does(self, person: Person):
        title = base_title(self.index.only_target(person.name, "holds_title") or "")
        phrases = TITLE_PARAPHRASES.get(title)
        return (self.rng.choice(phrases), title) if phrases else None

    def namesakes(self) -> list[Question]:
        c = "namesake"
        makers = [
            self.among_namesakes(
                self.certified,
                [
                    "Which company does the {first} who {attr} work for?",
                    "Who employs the {first} who {attr}?",
                ],
                ("certified_as", "employed_by"),
                c,
            ),
            self.among_namesakes(
                self.manages,
                [
                    "Who is the manager of the {first} running {attr}?",
                    "Who does the {first} in charge of {attr} report to?",
                ],
                ("manages_project", "answers_to"),
                c,
            ),
            self.among_namesakes(
                self.on_team,
                ["What does the {first} on {attr} do?", "What is the job title of the {first} in {attr}?"],
                ("member_of_team", "holds_title"),
                c,
            ),
            self.among_namesakes(
                self.at_firm,
                [
                    "Which team is the {first} at {attr} on?",
                    "The {first} who works for {attr}: which team is that?",
                ],
                ("employed_by", "member_of_team"),
                c,
            ),
        ]
        return self.take(c, self.shuffled(makers))

    def role_at_firm(self):
        """'Who checks the books at <firm>?': the only holder of the title at the firm."""
        holders = defaultdict(list)
        for person in self.world.people:
            title = base_title(self.index.only_target(person.name, "holds_title") or "")
            firm = self.index.only_target(person.name, "employed_by")
            if title in TITLE_PARAPHRASES and firm:
                holders[title, firm].append(person)
        templates = ["Who {attr} at {firm}?", "At {firm}, who {attr}?", "Which employee of {firm} {attr}?"]
        for (title, firm), people in self.shuffled(holders.items()):
            if len(people) == 1:
                gold = self.gold_of(people[0], "holds_title", "employed_by")
                phrase = self.rng.choice(TITLE_PARAPHRASES[title])
                made = self.question(
                    "paraphrased_role", self.rng.choice(templates), gold, attr=phrase, firm=firm
                )
                if made:
                    yield made

    def sector_among(self, relation: str, anchor_is_source: bool, templates: list[str]):
        """'Which company backed by <fund> lends small sums to market traders?': the one firm of the
        sector among the fund's (or the district's) firms."""
        anchors = self.index.subjects(relation) if anchor_is_source else self.index.objects(relation)
        for anchor in self.shuffled(anchors):
            firms = list(
                self.index.current[anchor, relation]
                if anchor_is_source
                else self.index.into[anchor, relation]
            )
            by_sector = defaultdict(list)
            for firm in firms:
                by_sector[self.index.only_target(firm, "operates_in_sector")].append(firm)
            for sector, found in self.shuffled(by_sector.items()):
                if sector in SECTORS and len(found) == 1:
                    link = (anchor, relation, found[0]) if anchor_is_source else (found[0], relation, anchor)
                    gold = [link, (found[0], "operates_in_sector", sector)]
                    phrase = self.rng.choice(SECTORS[sector][1])
                    made = self.question(
                        "paraphrased_role", self.rng.choice(templates), gold, x=anchor, attr=phrase
                    )
                    if made:
                        yield made
                        break

    def deliverable_for_client(self):
        templates = [
            "Which project for {x} is building {attr}?",
            "{x} ordered {attr}; which project is that?",
        ]
        for client in self.shuffled(self.index.objects("commissioned_by")):
            by_deliverable = defaultdict(list)
            for project in self.index.into[client, "commissioned_by"]:
                by_deliverable[self.index.only_target(project, "will_deliver")].append(project)
            for deliverable, found in self.shuffled(by_deliverable.items()):
                if deliverable in DELIVERABLES and len(found) == 1:
                    gold = [(found[0], "commissioned_by", client), (found[0], "will_deliver", deliverable)]
                    made = self.question(
                        "paraphrased_role",
                        self.rng.choice(templates),
                        gold,
                        x=client,
                        attr=DELIVERABLES[deliverable],
                    )
                    if made:
                        yield made
                        break

    def certified_at_firm(self):
        holders = defaultdict(list)
        for person in self.world.people:
            cert = self.index.only_target(person.name, "certified_as")
            firm = self.index.only_target(person.name, "employed_by")
            if cert and firm:
                holders[cert, firm].append(person)
        for (cert, firm), people in self.shuffled(holders.items()):
            if len(people) == 1:
                gold = self.gold_of(people[0], "certified_as", "employed_by")
                phrase = self.rng.choice(CERT_PARAPHRASES[cert])
                made = self.question(
                    "paraphrased_role", "Who at {firm} {attr}?", gold, firm=firm, attr=phrase
                )
                if made:
                    yield made

    def paraphrased_roles(self) -> list[Question]:
        c = "paraphrased_role"
        namesake_role = [
            (
                "member_of_team",
                ["Which team is the {first} who {attr} on?", "The {first} who {attr}: which team?"],
            ),
            ("answers_to", ["Who is the boss of the {first} who {attr}?"]),
            ("employed_by", ["Which company employs the {first} who {attr}?"]),
        ]
        makers = [self.role_at_firm(), self.role_at_firm()]
        makers += [self.among_namesakes(self.does, t, ("holds_title", r), c) for r, t in namesake_role]
        makers += [
            self.sector_among(
                "invested_in",
                True,
                ["Which company backed by {x} {attr}?", "Among the firms {x} invested in, which one {attr}?"],
            ),
            self.sector_among(
                "has_main_office_in", False, ["Which firm with its main office in {x} {attr}?"]
            ),
            self.deliverable_for_client(),
            self.certified_at_firm(),
        ]
        return self.take(c, makers)

    def unanswerable(self) -> list[Question]:
        names = {"hub": self.world.hub.name, "client": self.world.hub_client.name}
        return [
            Question("unanswerable", template.format(**names), [])
            for template in UNANSWERABLE[: self.wanted("unanswerable")]
        ]

    def all_questions(self) -> list[Question]:
        return (
            self.single_facts("direct", DIRECT)
            + self.single_facts("paraphrased", PARAPHRASED)
            + self.current_state()
            + self.namesakes()
            + self.multi_hop("multi_hop", TWO_HOPS)
            + self.multi_hop("multi_hop_3", THREE_HOPS)
            + self.paraphrased_roles()
            + self.unanswerable()
        )


def build_business_world(seed: int = 53, scale: float = 1.0) -> World:
    """The business world (see the module's docstring), the same on every run of a seed and scale."""
    return BusinessWorldBuilder(seed, scale).build()
