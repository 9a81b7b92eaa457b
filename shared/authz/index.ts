export {
  AccessGuard,
  bearerToken,
  denialReply,
  tokenKey,
  unavailableGuard,
  type AccessDecision,
  type AccessGuardOptions,
  type VerdictCache,
  type DenialReply,
  type DenialStatus,
  type RequestGuard,
} from './guard.js';
export { KubeReviewer, type AccessVerdict, type KubeReviewerOptions, type RestPort, type Reviewer } from './reviewer.js';
export {
  SUBJECT_ACCESS_REVIEWS_PATH,
  TOKEN_REVIEWS_PATH,
  describeAttributes,
  subjectAccessReviewSchema,
  tokenReviewSchema,
  userInfoSchema,
  type AccessAttributes,
  type NonResourceAttributes,
  type ResourceAttributes,
  type UserInfo,
} from './reviews.js';
export {
  METRICS_ATTRIBUTES,
  METRICS_AUTH_MODES,
  metricsAttributes,
  metricsAuthConfigShape,
  metricsGuard,
  metricsGuardFromEnv,
  parseResourceAttributes,
  type MetricsAuthMode,
  type MetricsAuthSettings,
} from './metrics.js';
