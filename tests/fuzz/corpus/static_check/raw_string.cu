R"x(raw string with " and */ inside)x" 'c' '\'
#define S "a\
 b"
