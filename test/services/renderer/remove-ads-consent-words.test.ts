import { expect } from 'chai';
import { ACCEPT_LABEL, ACKNOWLEDGE_LABEL, NOTICE_TEXT, REJECT_LABEL } from '../../../services/renderer/src/capture/remove-ads/consent-words.ts';

/** How the heuristic pass reads a control's label (already lower-cased and stripped of punctuation). */
function kind(label: string): 'reject' | 'acknowledge' | 'accept' | undefined {
  if (new RegExp(REJECT_LABEL).test(label)) return 'reject';
  if (new RegExp(ACKNOWLEDGE_LABEL).test(label)) return 'acknowledge';
  if (new RegExp(ACCEPT_LABEL).test(label)) return 'accept';
  return undefined;
}

describe('removeAds consent words (the heuristic pass reads labels with them)', () => {
  const refusals = {
    en: ['reject all', 'decline', 'only necessary cookies', "don't accept", 'only accept technically necessary cookies'],
    de: ['alle ablehnen', 'nur notwendige cookies', 'nicht einverstanden'],
    fr: ['tout refuser', 'continuer sans accepter', 'uniquement les cookies nécessaires'],
    es: ['rechazar todas', 'solo necesarias'],
    it: ['rifiuta tutti', 'solo cookie tecnici', 'continua senza accettare'],
    nl: ['alles weigeren', 'alleen noodzakelijke cookies'],
  };
  for (const [language, labels] of Object.entries(refusals)) {
    it(`reads refusals in ${language}`, () => {
      for (const label of labels) expect(kind(label), label).to.equal('reject');
    });
  }

  it('reads acknowledgements in all six languages', () => {
    for (const label of ['ok', 'got it', 'verstanden', "j'ai compris", 'entendido', 'ho capito', 'begrepen']) expect(kind(label), label).to.equal('acknowledge');
  });

  it('reads acceptances, which it never clicks, in all six languages', () => {
    for (const label of ['accept all cookies', 'agree and continue', 'alle akzeptieren', 'tout accepter', 'aceptar todas', 'accetta tutti', 'alles accepteren']) {
      expect(kind(label), label).to.equal('accept');
    }
  });

  it('takes no ordinary button for an answer', () => {
    for (const label of ['search', 'subscribe', 'back to top', 'copy link', 'read more', 'cookie settings', 'ok show me more']) expect(kind(label), label).to.equal(undefined);
  });

  it('finds notice text in the six languages, and not in ordinary prose', () => {
    const notice = new RegExp(NOTICE_TEXT, 'i');
    for (const text of ['We use cookies', 'Datenschutzeinstellungen', 'Votre consentement', 'Política de privacidad', 'Informativa sulla riservatezza', 'Wij vragen uw toestemming']) {
      expect(notice.test(text), text).to.equal(true);
    }
    expect(notice.test('The quick brown fox jumps over the lazy dog.')).to.equal(false);
  });
});
