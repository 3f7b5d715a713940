# Gradient codecs (kernels, wire sizes, cost): see issue "Gradient codecs".
