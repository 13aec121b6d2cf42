/* The sm_90a planner's measured table (plan_sm90.c): no cell measured yet,
 * so every dense problem takes the plain tiles. Replaced by the output of
 * bench/sweep-families.py. */
static const uint32_t sm90_table_m_edges[] = {16, 32, 64, 128, 256, 512, 1024, 2048};
static const uint32_t sm90_table_nk_edges[] = {2048, 4096, 8192, 16384};
static const sm90_table_cell sm90_table[] = {
    {255, 0, 0, 0, JG_FAMILY_PLAIN, 1000}, /* matches no class: the table is empty */
};
