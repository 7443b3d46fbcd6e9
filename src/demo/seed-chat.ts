import type { EntityManager } from '@mikro-orm/postgresql';
import { type Clinic, Conversation, Message, messageTypes, Patient } from '../entities/index.ts';
import { pgMediaStore } from '../media/store.ts';
import { SANDBOX_TEMPLATES } from '../network/sandbox-templates.ts';
import { previewOf } from '../services/chat/changes.ts';
import { writeTemplates } from '../services/chat/template-sync.ts';
import type { Rng } from './random.ts';

type MessageType = (typeof messageTypes)[number];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const inboundTexts = [
  'Hi, can I book an appointment for next week?',
  'Thank you!',
  'Is the clinic open on Friday?',
  'I need to cancel tomorrow, sorry',
  'What time is my appointment?',
  'Can you send me the invoice?',
  'שלום, אפשר לקבוע תור?',
  'Running 10 minutes late',
];
const outboundTexts = [
  'Of course! Does Tuesday at 10:00 work?',
  'We are open Friday 8:00-13:00.',
  'No problem, we cancelled it. Feel free to book again.',
  'Your appointment is on Monday at 9:30.',
  'See you soon!',
];
const reasons = [
  'The number is not registered on the messaging network.',
  'Message expired before it could be delivered.',
];

/** A tiny valid PNG and PDF, so demo media links serve real files. */
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cfc0f01f0005000200a5b1c9a40000000049454e44ae426082',
  'hex',
);
const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
);

/**
 * The demo inbox of one clinic: the sandbox's templates, and conversations with the clinic's
 * patients (a shared family phone among them) and with numbers no patient has, holding messages
 * of every type and direction and of every status but queued (see below), media on some, reactions and replies, the free-text
 * window open on some conversations (a patient wrote in the last 24 hours) and closed on others.
 * Times are offsets from `now`, numbered in time order as the service numbers changes.
 */
export async function seedChat(em: EntityManager, clinic: Clinic, rng: Rng, now: Date): Promise<void> {
  await writeTemplates(em, clinic.id, SANDBOX_TEMPLATES);
  const patients = await em.find(
    Patient,
    { clinic: clinic.id, phone: { $ne: null } },
    { filters: false, orderBy: { id: 'asc' }, limit: 14 },
  );
  const phones = [...new Set(patients.map((p) => p.phone as string))].slice(0, 10);
  phones.push('+972541230987', '+972507770001');
  // The default store, in the seed's transaction.
  const store = pgMediaStore(em);
  const media = {
    png: await store.put(clinic.id, PNG, 'image/png'),
    pdf: await store.put(clinic.id, PDF, 'application/pdf'),
  };
  const clinicPhone = clinic.phone as string;
  let seq = 0;
  const all: { at: Date; m: Message; c: Conversation }[] = [];

  for (const [i, phone] of phones.entries()) {
    // Windows: the first half of the conversations heard from the patient within 24 hours.
    const recent = i % 2 === 0;
    const lastAt = new Date(now.getTime() - (recent ? rng.int(5, 20 * 60) * MINUTE : rng.int(2, 40) * DAY));
    const count = rng.int(2, 7);
    const conversation = em.create(Conversation, {
      clinic,
      patientPhone: phone,
      clinicPhone,
      displayName:
        i % 4 === 3
          ? null
          : `${['Dana', 'Yossi', 'Maya', 'Avi', 'Noa', 'Eli'][i % 6]} ${rng.pick(['C.', 'L.', 'M.'])}`,
      lastMessagePreview: null,
      lastActivityAt: null,
      lastInboundAt: null,
      lastOutboundAt: null,
      isHandled: clinic.handledMarkingEnabled && i % 3 === 1,
      seq: 0,
      createdAt: new Date(lastAt.getTime() - count * 3 * HOUR),
      updatedAt: lastAt,
    });
    let lastOutbound: Message | null = null;
    for (let k = 0; k < count; k++) {
      // The last message is the patient's in conversations with an open window.
      const inbound = k === count - 1 ? recent || rng.chance(0.3) : k % 2 === 0;
      const at = new Date(lastAt.getTime() - (count - 1 - k) * 3 * HOUR);
      // Each conversation's first message from the patient is of another type, so every type is there.
      const type: MessageType = inbound
        ? k === 0
          ? messageTypes[i % messageTypes.length]
          : 'text'
        : k === 1 && i % 3 === 0
          ? rng.pick(['image', 'document'] as const)
          : 'text';
      const withMedia = ['image', 'document', 'audio', 'video', 'sticker'].includes(type);
      const age = now.getTime() - at.getTime();
      const sent = inbound ? null : new Date(at.getTime() + 2000);
      const delivered = inbound || age < MINUTE ? null : new Date(at.getTime() + 30_000);
      const read =
        delivered && i % 3 !== 2 && age > 10 * MINUTE ? new Date(at.getTime() + 10 * MINUTE) : null;
      const repliedTo: Message | null = inbound && lastOutbound && rng.chance(0.3) ? lastOutbound : null;
      const m: Message = em.create(Message, {
        clinic,
        conversation,
        direction: inbound ? 'inbound' : 'outbound',
        type,
        fromPhone: inbound ? phone : clinicPhone,
        toPhone: inbound ? clinicPhone : phone,
        patientPhone: phone,
        text:
          type === 'text'
            ? rng.pick(inbound ? inboundTexts : outboundTexts)
            : type === 'image' || type === 'document'
              ? rng.chance(0.5)
                ? 'Here it is'
                : null
              : null,
        mediaType: withMedia ? type : null,
        mediaMime: withMedia ? (type === 'document' ? 'application/pdf' : 'image/png') : null,
        mediaPath: withMedia ? (type === 'document' ? media.pdf : media.png) : null,
        mediaFilename: type === 'document' ? 'treatment-plan.pdf' : null,
        templateName:
          !inbound && type !== 'text' ? `clinic_${type}` : !inbound && k === 0 ? 'welcome_message' : null,
        templateParams: !inbound && k === 0 && type === 'text' ? ['Dana'] : null,
        repliedTo,
        reactionPatient: !inbound && rng.chance(0.2) ? rng.pick(['👍', '❤️', '🙏']) : null,
        reactionClinic: inbound && rng.chance(0.2) ? '👍' : null,
        networkMessageId: `sbx_demo_${clinic.id}_${i}_${k}`,
        sentAt: sent,
        deliveredAt: delivered,
        readAt: read,
        seq: 0,
        createdAt: at,
        updatedAt: read ?? delivered ?? sent ?? at,
      });
      if (!inbound) lastOutbound = m;
      all.push({ at: m.updatedAt, m, c: conversation });
    }
    // One message in each state no receipt has moved on since: sent a minute ago (not delivered
    // yet), sent hours ago (never delivered: the handset is off) and failed (the network rejected
    // it). None is queued: the seed queues no send job, and a queued message without one would
    // never be sent (docs/chat.md, Demo data).
    const state = (['sent', 'sent', 'failed'] as const)[i];
    if (state) {
      const at = new Date(now.getTime() - (i === 0 ? MINUTE : (i + 1) * HOUR));
      const m = em.create(Message, {
        clinic,
        conversation,
        direction: 'outbound',
        type: 'text',
        fromPhone: clinicPhone,
        toPhone: phone,
        patientPhone: phone,
        text: rng.pick(outboundTexts),
        networkMessageId: `sbx_demo_${clinic.id}_${i}_state`,
        sentAt: state === 'sent' ? new Date(at.getTime() + 2000) : null,
        failedAt: state === 'failed' ? new Date(at.getTime() + 5000) : null,
        failureReason: state === 'failed' ? rng.pick(reasons) : null,
        seq: 0,
        createdAt: at,
        updatedAt: new Date(at.getTime() + 5000),
      });
      all.push({ at: m.updatedAt, m, c: conversation });
    }
  }
  all.sort((a, b) => a.at.getTime() - b.at.getTime());
  for (const { m, c } of all) {
    m.seq = ++seq;
    c.seq = seq;
    c.updatedAt = m.updatedAt;
    const at = m.createdAt;
    if (!c.lastActivityAt || at >= c.lastActivityAt) {
      c.lastActivityAt = at;
      c.lastMessagePreview = previewOf(m);
    }
    if (m.direction === 'inbound' && (!c.lastInboundAt || at >= c.lastInboundAt)) c.lastInboundAt = at;
    if (m.direction === 'outbound' && (!c.lastOutboundAt || at >= c.lastOutboundAt)) c.lastOutboundAt = at;
  }
  await em.flush();
  await em
    .getConnection()
    .execute(
      'update "clinic" set "chat_seq" = ? where "id" = ?',
      [seq, clinic.id],
      'run',
      em.getTransactionContext(),
    );
}
