import { foldForSearch } from '../../lib/text.ts';

/**
 * The folded name columns behind name search: a prefix of "first last" matches first names and
 * full names, a prefix of "last first" matches last names (and "Cohen Dana" style full names).
 * Whatever writes a patient's name writes these too.
 */
export function foldedNames(first: string | null | undefined, last: string | null | undefined) {
  const f = foldForSearch(first ?? '');
  const l = foldForSearch(last ?? '');
  return { nameFl: `${f} ${l}`.trim(), nameLf: `${l} ${f}`.trim() };
}
