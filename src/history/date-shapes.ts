/**
 * Dates and times in the forms people and programs write them, in English, French, German, Spanish, Portuguese,
 * Italian and CJK: what the digest weighs as a date (src/history/information.ts). Global regular expressions: callers
 * reset `lastIndex` or use `replace`/`matchAll`.
 */
const MONTH = `jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|janvier|f[ée]vrier|mars|avril|mai|juin|juillet|ao[uû]t|septembre|octobre|novembre|d[ée]cembre|januar|februar|m[äa]rz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre`;
/**
 * A weekday or a month named alone is a date too ("goes out on Monday, not Saturday"); "today" and "next week" are
 * not. English and German write them capitalised (so "may" and "march" stay verbs); the Romance languages in lower
 * case, either way here.
 */
const CAPITALISED_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October November December Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag Januar Februar März Juni Juli Oktober Dezember";
const ROMANCE_DAYS = "lundi mardi mercredi jeudi vendredi samedi dimanche janvier février avril juin juillet août septembre octobre novembre décembre lunes martes miércoles jueves viernes sábado domingo enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre segunda-feira terça-feira quarta-feira quinta-feira sexta-feira janeiro fevereiro março maio junho julho setembro outubro novembro dezembro lunedì martedì mercoledì giovedì venerdì sabato domenica gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre";
export const DAY_OR_MONTH = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:${[...CAPITALISED_DAYS.split(" "), ...ROMANCE_DAYS.split(" ").map((w) => `[${w[0]!.toUpperCase()}${w[0]}]${w.slice(1)}`)].join("|")})(?![\p{L}\p{N}])|[月火水木金土日]曜日`,
  "gu",
);
/** A day with a month's name on either side (an ordinal, a German "3.", a French "le"), or a month with a year. */
const NAMED_DATE = [
  String.raw`(?<![\p{L}\p{N}])(?:${MONTH})\.?\s+\d{1,2}(?:st|nd|rd|th)?(?:,?\s+\d{4})?(?![\p{L}\p{N}])`,
  String.raw`(?<![\p{L}\p{N}])\d{1,2}(?:st|nd|rd|th|er|\.|º)?\s+(?:de\s+)?(?:${MONTH})(?:\s+(?:de\s+)?\d{4})?(?![\p{L}\p{N}])`,
  String.raw`(?<![\p{L}\p{N}])(?:${MONTH})\s+\d{4}(?![\p{L}\p{N}])`,
].join("|");
const CJK_DATE = String.raw`\d{1,4}年(?:\d{1,2}月)?(?:\d{1,2}日)?|\d{1,2}月\d{1,2}日`;

/**
 * Dates and times in their usual written forms: ISO and numeric dates, a day with a month's name on either side
 * (with an ordinal, a German "3.", a French "le"), times with a colon or am/pm, quarters with a year, and CJK dates.
 */
export const DATE = new RegExp(
  [
    String.raw`\b\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?Z?)?`,
    String.raw`\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{1,2}\.\d{1,2}\.\d{2,4}\b`,
    NAMED_DATE,
    String.raw`\b\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?|\b\d{1,2}\s?[ap]\.?m\.?(?![\p{L}])|\b\d{1,2}\s?h\s?\d{2}\b`,
    String.raw`\b[qh][1-4]\s+\d{4}\b|\bfy\s?\d{2,4}\b`,
    CJK_DATE,
  ].join("|"),
  "giu",
);
