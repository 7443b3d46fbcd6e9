import { amount2, name, text } from '../../write-input.ts';

/** The input rules several catalog lists share, each with the text its request bodies show. */
export const label = name(255).meta({
  description: "The entry's name as staff see it (up to 255 characters).",
});
export const code = text(32).meta({ description: 'A short code, e.g. a procedure code.' });
export const price = amount2(0).meta({ description: 'A price, at most two decimals.' });
