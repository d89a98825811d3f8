/* Struct-heavy code: an array of records sorted by a key (insertion sort on struct values),
 * structs passed and returned by value, a linked list in a static pool. */
struct point { i16 x, y; };
struct rec { u8 tag; struct point p; i32 w; };
struct node { struct node *next; struct rec r; };

static struct node pool[10];

static struct point add(struct point a, struct point b) {
    struct point r = { (i16)(a.x + b.x), (i16)(a.y + b.y) };
    return r;
}

static i32 key(const struct rec *r) { return r->w * 3 + r->p.x - r->p.y; }

int main(int argc, char **argv) {
    i16 a = num(argv[1]), b = num(argv[2]);
    struct rec recs[8];
    struct point acc = { 0, 0 };
    for (i16 i = 0; i < 8; i++) {
        recs[i].tag = (u8)('a' + i);
        recs[i].p.x = (i16)(a * i - b);
        recs[i].p.y = (i16)(b * (7 - i) + a);
        recs[i].w = (i32)(i16)(a ^ (i * 37)) * (i - 3);
        acc = add(acc, recs[i].p);
    }
    for (i16 i = 1; i < 8; i++) {
        struct rec t = recs[i];
        i16 j = (i16)(i - 1);
        while (j >= 0 && key(&recs[j]) > key(&t)) {
            recs[j + 1] = recs[j];
            j--;
        }
        recs[j + 1] = t;
    }
    struct node *head = 0;
    for (i16 i = 0; i < 8; i++) {
        pool[i].r = recs[i];
        pool[i].next = head;
        head = &pool[i];
    }
    u16 h = 0;
    for (struct node *n = head; n; n = n->next)
        h = (u16)(h * 31 + n->r.tag + (u16)n->r.p.x);
    return (u16)(h ^ (u16)acc.x ^ (u16)(acc.y << 4));
}
