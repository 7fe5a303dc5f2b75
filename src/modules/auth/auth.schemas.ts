import { Type } from '@sinclair/typebox';

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    otp: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        description: 'TOTP code or unused backup code; required when 2FA is on',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TokenPair = Type.Object({
  access: Type.String({ description: 'Bearer token, valid 24 hours' }),
  refresh: Type.String({ description: 'Valid 7 days' }),
});

export const RefreshBody = Type.Object(
  { refresh: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);

export const AccessOnly = Type.Object({ access: Type.String() });

const CurrentPassword = Type.String({ minLength: 1, maxLength: 1024, description: 'The current password' });
const SecondFactorCode = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'A current authenticator code or an unused backup code',
});

export const SetupTwoFactorBody = Type.Object({ password: CurrentPassword }, { additionalProperties: false });

export const SetupTwoFactorResponse = Type.Object({
  seed: Type.String({ description: 'Base32 TOTP secret for manual entry' }),
  qr_code_url: Type.String({ description: 'otpauth:// URI (what the QR code encodes)' }),
  qr_code_image: Type.String({ description: 'PNG QR code of qr_code_url as a data: URL' }),
});

export const VerifyTwoFactorBody = Type.Object(
  { otp: Type.String({ minLength: 1, maxLength: 32 }) },
  { additionalProperties: false },
);

export const BackupCodesResponse = Type.Object({
  backup_codes: Type.Array(Type.String(), { description: 'Ten single-use codes, shown only this once' }),
});

export const EnrollmentResponse = Type.Object({
  backup_codes: BackupCodesResponse.properties.backup_codes,
  access: Type.String({ description: 'A fresh access token: enabling 2FA revokes every token issued before' }),
  refresh: Type.String(),
});

export const ConfirmedByTwoFactorBody = Type.Object(
  { password: CurrentPassword, otp: SecondFactorCode },
  { additionalProperties: false },
);

export const DisableTwoFactorResponse = Type.Object({ message: Type.String() });

export const NewPasswordBody = Type.Object(
  {
    password: CurrentPassword,
    new_password: Type.String({ minLength: 1, maxLength: 1024 }),
    confirm_new_password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const NewPasswordResponse = Type.Object({
  message: Type.String(),
  access: Type.String({ description: 'A fresh access token (all earlier tokens are revoked)' }),
  refresh: Type.String(),
});
