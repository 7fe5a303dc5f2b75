import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';

/**
 * Password change (spec 4.1 new_password). The server revokes every earlier token and answers a
 * new pair, which this session carries on with.
 */
export function useChangePassword(onChanged: () => void) {
  const api = useApi();
  return useMutation({
    mutationFn: (body: { password: string; new_password: string; confirm_new_password: string }) =>
      unwrap(api.client.POST('/service/new_password/', { body })),
    onSuccess: ({ access, refresh }) => {
      api.session.replaceTokens({ access, refresh });
      onChanged();
    },
  });
}

/** 2FA enrolment, first step (spec 3.1 setup_2fa): the current password gives a seed and its QR code. */
export function useSetUpTwoFactor(onStarted: () => void) {
  const api = useApi();
  return useMutation({
    mutationFn: (password: string) => unwrap(api.client.POST('/service/setup_2fa/', { body: { password } })),
    onSuccess: () => onStarted(),
  });
}

/** 2FA enrolment confirmed by a code: backup codes and new tokens, every other session signed out. */
export function useVerifyTwoFactor() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (otp: string) => unwrap(api.client.POST('/service/verify_2fa_enrollment/', { body: { otp } })),
    onSuccess: ({ access, refresh }) => {
      api.session.replaceTokens({ access, refresh });
      void queryClient.invalidateQueries({ queryKey: ['account'] });
    },
  });
}

/** What new backup codes and turning 2FA off ask for: the password and a code. */
interface TwoFactorProof {
  password: string;
  otp: string;
}

export function useNewBackupCodes(onRenewed: () => void) {
  const api = useApi();
  return useMutation({
    mutationFn: (body: TwoFactorProof) => unwrap(api.client.POST('/service/new_backup_codes/', { body })),
    onSuccess: () => onRenewed(),
  });
}

export function useDisableTwoFactor() {
  const api = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: TwoFactorProof) => unwrap(api.client.POST('/service/disable_2fa/', { body })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['account'] }),
  });
}
