/**
 * Personal data: payment card numbers and US social security numbers by
 * default, e-mail addresses and phone numbers when the policy asks. Each
 * shape is checked beyond its digits (Luhn, issuer ranges, SSA rules) so
 * order numbers, timestamps and decimals pass untouched.
 */
import { PRIORITY, type SecretRule } from "./rule";

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** 13–19 digits, one kind of separator at most, a card network's first digit (2–6), and a valid Luhn check digit. */
function isCardNumber(candidate: string): boolean {
  const separators = new Set(candidate.replace(/\d/g, ""));
  if (separators.size > 1) return false;
  const digits = candidate.replace(/\D/g, "");
  return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhnValid(digits);
}

/** The SSA never issues area 000, 666 or 900–999, group 00 or serial 0000. */
function isSsn(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "");
  const area = digits.slice(0, 3);
  return area !== "000" && area !== "666" && area[0] !== "9" && digits.slice(3, 5) !== "00" && digits.slice(5) !== "0000";
}

export const PII_RULES: readonly SecretRule[] = [
  {
    id: "card-number",
    runAnchor: "digits",
    priority: PRIORITY.pii,
    keywords: [],
    pii: "cards",
    // Not after or before a decimal point (0.41111111111111116 is a float), nor inside a word: the digits that
    // start a line of a hex dump are not a card.
    pattern: /(?<![\w.-])\d(?:[ -]?\d){12,18}(?!\w|\.\d)/g,
    accept: isCardNumber,
  },
  {
    id: "us-ssn",
    runAnchor: "digits",
    priority: PRIORITY.pii,
    keywords: [],
    pii: "ssn",
    pattern: /(?<![\w.-])\d{3}-\d{2}-\d{4}(?![\w-])|\bssn["']?[ \t]*[:=][ \t]*["']?(?<secret>\d{9})(?!\d)/gi,
    accept: isSsn,
  },
  {
    id: "email",
    priority: PRIORITY.pii,
    keywords: ["@"],
    pii: "email",
    pattern: /(?<![\w.%+-])[A-Za-z0-9][\w.%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.)+[A-Za-z]{2,24}\b/g,
  },
  {
    id: "phone",
    priority: PRIORITY.pii,
    keywords: [],
    pii: "phone",
    // International (+country …) or North American ((415) 555-0100, 415-555-0100) numbers.
    pattern: /(?<![\w+])(?:\+[1-9]\d{0,2}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}|\(?[2-9]\d{2}\)?[ .-]?[2-9]\d{2}[ .-]\d{4})(?![\w-])/g,
    accept: (candidate) => {
      const digits = candidate.replace(/\D/g, "").length;
      return digits >= 10 && digits <= 15;
    },
  },
];
