/* calculator.c — the calculator service's code-beside, as a WF 3.5 developer wrote it in
 * C#: plain functions over the workflow's properties, no knowledge of messages or hosts. */
#include <stdbool.h>
#include <stdint.h>

void calc_power_on(int32_t *current, bool *powered);
void calc_power_on(int32_t *current, bool *powered)
{
    *current = 0;
    *powered = true;
}

void calc_add(int32_t *current, int32_t operand);
void calc_add(int32_t *current, int32_t operand)
{
    *current += operand;
}

void calc_subtract(int32_t *current, int32_t operand);
void calc_subtract(int32_t *current, int32_t operand)
{
    *current -= operand;
}

void calc_multiply(int32_t *current, int32_t operand);
void calc_multiply(int32_t *current, int32_t operand)
{
    *current *= operand;
}

void calc_divide(int32_t *current, int32_t operand);
void calc_divide(int32_t *current, int32_t operand)
{
    *current /= operand; /* CheckDivisor ran first */
}

/* Non-zero refuses the message: dividing by zero is the client's mistake. */
int32_t calc_check_divisor(int32_t operand);
int32_t calc_check_divisor(int32_t operand)
{
    return operand == 0 ? 1 : 0;
}

void calc_power_off(bool *powered);
void calc_power_off(bool *powered)
{
    *powered = false;
}

bool calc_is_powered(bool powered);
bool calc_is_powered(bool powered)
{
    return powered;
}
