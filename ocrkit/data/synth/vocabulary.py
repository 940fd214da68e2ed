"""Word lists the synthetic pages print: receipt and form vocabulary, document titles, table heads, letter
phrases. Data only; `text.TextGen` and the layouts draw from them."""

from __future__ import annotations

# --- receipts ------------------------------------------------------------------------------------------
MALAY_WORDS = (
    "JALAN TAMAN BANDAR KUALA LUMPUR SELANGOR PETALING JAYA SHAH ALAM KLANG SUBANG JOHOR BAHRU PULAU PINANG "
    "SDN BHD ENTERPRISE TRADING HARDWARE RESTORAN KEDAI MAKAN BAKERIES MART STATIONERY FLORIST PHARMACY"
).split()
ITEM_WORDS = (
    "WHITE BREAD WHOLEMEAL JUMBO MILK TEH TARIK KOPI AIS NASI LEMAK AYAM GORENG MEE SUP ROTI CANAI TELUR "
    "BATTERY AA CABLE TIE SCREW 2INCH PAINT BRUSH TAPE PVC GLUE PAPER A4 PEN BLUE BLACK FILE CLIP STAPLER "
    "SUGAR RICE 5KG OIL 2L FLOUR SALT SOAP SHAMPOO TISSUE BOX MINERAL WATER 1.5L COLA CHOC BISCUIT "
    "PEACOCK YELLOW LEAF ROSE LILY PALM STATIONERY REFILL SET PACK PCS BTL CTN"
).split()
RECEIPT_KEYS = (
    "SUBTOTAL",
    "SUB TOTAL",
    "TOTAL",
    "TOTAL (RM)",
    "TOTAL INCL. GST",
    "GST 6%",
    "SST 10%",
    "SERVICE CHARGE",
    "ROUNDING",
    "ROUNDING ADJ",
    "CASH",
    "CHANGE",
    "CHANGE DUE",
    "DISCOUNT",
    "NET TOTAL",
    "TOTAL QTY",
    "AMOUNT DUE",
    "PAID",
    "VISA",
    "MASTERCARD",
    "TAX",
    "VAT 19%",
    "MwSt 7%",
    "TVA 20%",
    "Total",
    "Cash",
    "Change",
    "Subtotal",
    "Total Sales (Inclusive of GST)",
    "Total Amount",
    "Grand Total",
)
RECEIPT_TITLES = (
    "TAX INVOICE",
    "RECEIPT",
    "CASH BILL",
    "Official Receipt",
    "INVOICE",
    "SIMPLIFIED TAX INVOICE",
    "Rechnung",
    "Quittung",
    "Ticket de caisse",
    "KASSENBON",
)
RECEIPT_FOOTERS = (
    "THANK YOU",
    "Thank you, please come again",
    "GOODS SOLD ARE NOT RETURNABLE",
    "PLEASE KEEP THIS RECEIPT",
    "Vielen Dank für Ihren Einkauf",
    "Merci de votre visite",
    "CUSTOMER'S COPY",
    "*** THANK YOU ***",
    "Have a nice day!",
)
ITEM_HEADS = ("Description", "Item", "Items", "Artikel", "Qty Item")
NUMBER_COLUMN_HEADS = ("Qty", "U.P", "Price", "Disc", "Tax")
QUANTITY_HEADS = ("Qty", "No", "#")
AMOUNT_HEADS = ("Amount", "Amt(RM)", "Total", "RM", "EUR")
TAX_HEADS = ("Tax", "GST", "TX", "Code")
TAX_CODES = ("SR", "ZR", "S", "Z", "T")
QUANTITY_MARKS = ("X", "x", "@")

# --- prose and periodicals ------------------------------------------------------------------------------
BULLETS = ("•", "-", "–", "*", "1.", "a)", "(i)", "§")
YEAR_ENDINGS = (".", "", ".")
SECTION_NUMERALS = ("I.", "II.", "III.", "IV.", "V.", "VI.", "1.", "2.")

# --- tables ----------------------------------------------------------------------------------------------
TABLE_HEADS = ("Qty", "No.", "Price", "Amount", "Date", "ID", "Code", "Menge", "Prix", "Total")

# --- letters ---------------------------------------------------------------------------------------------
SUBJECT_PREFIXES = ("Re: ", "Betreff: ", "Objet : ", "")
CLOSINGS = ("Sincerely,", "Mit freundlichen Grüßen", "Cordialement,", "Yours faithfully,")

# --- forms and key/value lists ---------------------------------------------------------------------------
FIELD_LABELS = {
    "de": (
        "Name",
        "Vorname",
        "Straße",
        "PLZ / Ort",
        "Geburtsdatum",
        "Telefon",
        "E-Mail",
        "Datum",
        "Unterschrift",
        "Kundennummer",
        "Betrag",
        "Rechnungsnr.",
        "Bemerkungen",
    ),
    "fr": (
        "Nom",
        "Prénom",
        "Adresse",
        "Code postal",
        "Ville",
        "Date de naissance",
        "Téléphone",
        "Courriel",
        "Date",
        "Signature",
        "N° client",
        "Montant",
        "Objet",
    ),
    "en": (
        "Name",
        "First name",
        "Address",
        "City",
        "ZIP code",
        "Date of birth",
        "Phone",
        "E-mail",
        "Date",
        "Signature",
        "Customer no.",
        "Amount",
        "Reference",
        "Invoice No.",
    ),
}
RECEIPT_META_KEYS = (
    "Invoice No",
    "Receipt #",
    "Bill No",
    "Doc No",
    "Cashier",
    "Counter",
    "Table",
    "Date",
    "Time",
    "Served by",
    "Member",
    "Trans",
    "Terminal",
    "Ref",
)
DATE_FORMATS = (
    "%d/%m/%Y",
    "%d-%m-%Y",
    "%Y-%m-%d",
    "%d.%m.%Y",
    "%m/%d/%y",
    "%d %b %Y",
    "%B %d, %Y",
    "%d/%m/%Y %H:%M",
    "%d-%m-%Y %I:%M:%S %p",
    "%A, %d %B %Y",
)
