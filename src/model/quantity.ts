// Kubernetes resource.Quantity parsing. client-node's quantityToScalar rejects decimal values with a suffix
// ("1.5Gi", "0.5k") and returns bigint for some suffixes, so the grammar is implemented here:
//   <quantity> ::= <signedNumber><suffix>;  suffix ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E)
//                                             | decimalExponent (e|E followed by a signed integer)
// Values are returned as JS numbers in base units; cpu is converted to millicores by the caller, rounding up
// as the API server's MilliValue() does.

const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

const QUANTITY_RE = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/** Parses a quantity (string or number) to base units; undefined when it is not a valid quantity. */
export function parseQuantity(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw !== 'string') return undefined;
  const match = QUANTITY_RE.exec(raw.trim());
  if (!match) return undefined;
  const number = Number(match[1]);
  const suffix = match[2] ?? '';
  if (suffix in BINARY) return number * BINARY[suffix]!;
  if (suffix in DECIMAL) return number * DECIMAL[suffix]!;
  return number * 10 ** Number(suffix.slice(1));
}

/** CPU in millicores, rounded up like Quantity.MilliValue(). */
export function toMilli(value: number): number {
  // Guard against binary floating point noise (0.1 * 1000 = 100.00000000000001).
  return Math.ceil(Math.round(value * 1000 * 1e6) / 1e6);
}
