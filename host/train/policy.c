/* policy.c - the list of offload policies (policy.h). */
#include "train/policy.h"

#include <stddef.h>

const train_policy *const train_policies[] = {
    &policy_opt_cpu, &policy_opt_gpu, &policy_opt_hbm, &policy_activations, &policy_parameters, NULL,
};
